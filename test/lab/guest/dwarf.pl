# SPDX-License-Identifier: GPL-2.0
# dwarf.pl SECS: perl's work in the DWARF run (dwarf-work.sh), for SECS
# seconds: recursion, a hash, sort with a block and a regex, each its own
# path through the interpreter's C code.  No modules: the guest has perl
# alone, as perl-base installs it.

sub fib { my $n = shift; return $n < 2 ? $n : fib($n - 1) + fib($n - 2) }

sub words {
	my %h;
	$h{sprintf "%x", $_ * 2654435761 % 65521}++ for 1 .. 2000;
	return scalar keys %h;
}

sub ordered {
	my @a = sort { $a <=> $b } map { $_ * 7919 % 10007 } 1 .. 3000;
	return $a[0];
}

sub grepped {
	my $s = join " ", 1 .. 3000;
	my @m = $s =~ /\b(\d*7\d*)\b/g;
	return scalar @m;
}

print "perl: pid $$\n";
my $end = time + shift;
my $rounds = 0;
while (time < $end) {
	fib(16);
	words();
	ordered();
	grepped();
	$rounds++;
}
print "perl: pid $$: $rounds rounds\n";
