#!/usr/bin/perl
# SPDX-License-Identifier: LGPL-2.1-only
#
# The kernel-doc comments in lib/vmctx.h are the one source of each call's
# contract; the man pages (doc/*.3.adoc) say it again in prose, and must
# not say something else:
#  - every prototype in a page's SYNOPSIS is the header's declaration,
#    word for word (whitespace aside);
#  - an error code a page's RETURN VALUE gives in a sentence naming a
#    call is one that call's "Return:" gives;
#  - every error code a call's "Return:" gives is in the RETURN VALUE of
#    the page that declares the call, in a sentence naming the call or in
#    one naming none ("On failure they return ...").
# Usage: check-api-doc.pl TOP_SRCDIR
use strict;
use warnings;

my $top = shift // $ENV{top_srcdir} // '.';
my $code_re = qr/\b(VMCTX_E_[A-Z][A-Z_]*|E[A-Z][A-Z0-9]+)\b/;
my (%proto, %codes);
my $fail = 0;

sub squash {
	my ($s) = @_;
	$s =~ s/\s+/ /g;
	$s =~ s/\( /(/g;
	$s =~ s/^ | $//g;
	return $s;
}

sub complain {
	print STDERR "check-api-doc: @_\n";
	$fail = 1;
}

# The header: each "/**" comment, its Return: paragraph, and the
# declaration after it.
open(my $h, '<', "$top/lib/vmctx.h") or die "lib/vmctx.h: $!";
my $hdr = do { local $/; <$h> };
close($h);
while ($hdr =~ m{/\*\*\n \* (vmctx_[a-z0-9_]+)\(\) - (.*?)\*/\n(.*?;)}sg) {
	my ($name, $doc, $decl) = ($1, $2, $3);
	my ($ret) = $doc =~ /^ \* Return: (.*)\z/ms;
	$proto{$name} = squash($decl);
	$codes{$name} = { map { $_ => 1 } (($ret // '') =~ /$code_re/g) };
}
complain("no kernel-doc found in lib/vmctx.h") unless %proto;

sub section {
	my ($text, $title) = @_;
	my ($s) = $text =~ /^== \Q$title\E\n(.*?)(?=^== |\z)/ms;
	return $s // '';
}

my $pages = 0;
for my $page (sort glob("$top/doc/*.3.adoc")) {
	open(my $f, '<', $page) or die "$page: $!";
	my $text = do { local $/; <$f> };
	close($f);
	(my $rel = $page) =~ s{^\Q$top\E/}{};
	$pages++;

	# SYNOPSIS: each declaration, from its return type to its ';'.
	my %named;
	my $syn = section($text, 'SYNOPSIS');
	while ($syn =~ /^([a-z][^;{}#]*?\b(vmctx_[a-z0-9_]+)\([^;]*?\);)/msg) {
		my ($decl, $name) = ($1, $2);
		next if $decl =~ /^typedef/;
		$named{$name} = 1;
		if (!exists $proto{$name}) {
			complain("$rel: $name is in the SYNOPSIS but has no kernel-doc in vmctx.h");
			next;
		}
		complain("$rel: SYNOPSIS differs from vmctx.h:\n  page:   " . squash($decl) .
			 "\n  header: $proto{$name}") if squash($decl) ne $proto{$name};
	}

	# RETURN VALUE, a clause (sentence or ';' part) at a time.
	my $rv = squash(section($text, 'RETURN VALUE'));
	my (%said, %generic);
	for my $clause (split /(?<=[.;])\s+(?=[A-Z*(])/, $rv) {
		# the calls a clause is about, not those a parenthesis mentions
		(my $about = $clause) =~ s/\*(vmctx_[a-z0-9_]+)\*\(\)/<$1>/g;
		1 while $about =~ s/\([^()]*\)//g;
		my @fns = grep { exists $codes{$_} } ($about =~ /<(vmctx_[a-z0-9_]+)>/g);
		my @cs = $clause =~ /$code_re/g;
		if (!@fns) {
			$generic{$_} = 1 for @cs;
			next;
		}
		for my $fn (@fns) {
			$said{$fn}{$_} = 1 for @cs;
		}
		for my $c (@cs) {
			next if grep { $codes{$_}{$c} } @fns;
			complain("$rel: RETURN VALUE gives $c for " . join(', ', map { "$_()" } @fns) .
				 ", which vmctx.h's Return: does not");
		}
	}
	for my $name (sort keys %named) {
		for my $c (sort keys %{$codes{$name} // {}}) {
			complain("$rel: $name() may return $c (vmctx.h), which RETURN VALUE does not say")
				unless $said{$name}{$c} || $generic{$c};
		}
	}
}
exit 1 if $fail;
print "check-api-doc: ", scalar(keys %proto), " calls, $pages pages: the pages agree with vmctx.h\n";
exit 0;
