#!/usr/bin/perl
# SPDX-License-Identifier: LGPL-2.1-only
#
# Write a trace-cmd data file (format version 6, trace-cmd.dat.v6(5)) that
# holds one kvm:kvm_exit record of the vmctx-patched layout (patch 0007:
# guest_cr3 last): an HLT exit (VMX) of vCPU 1 with guest CR3 0x12346801,
# the root 0x12346000 with PCID bits, which use-libvmctx puts in its bundle.
# This machine has no KVM to record one, and the packaged plugin is tested
# with trace-cmd report as users run it.  The layout is the one
# test/test-plugin.c builds from the TP_STRUCT__entry.
#
# Usage: make-trace-dat.pl OUT.dat   (perl-base only: runs in a bare chroot)
use strict;
use warnings;

my $out = shift or die "usage: make-trace-dat.pl OUT.dat\n";
my $page = 4096;
my $id = 103;

my $header_page = join '',
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n",
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n",
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n",
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
my $header_event = join '',
	"# compressed entry header\n",
	"\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n",
	"\tpadding     : type == 29\n\ttime_extend : type == 30\n",
	"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

# name, type, offset, size, signed
my @fields = (
	['common_type', 'unsigned short', 0, 2, 0],
	['common_flags', 'unsigned char', 2, 1, 0],
	['common_preempt_count', 'unsigned char', 3, 1, 0],
	['common_pid', 'int', 4, 4, 1],
	undef,
	['exit_reason', 'unsigned int', 8, 4, 0],
	['guest_rip', 'unsigned long', 16, 8, 0],
	['isa', 'u32', 24, 4, 0],
	['info1', 'u64', 32, 8, 0],
	['info2', 'u64', 40, 8, 0],
	['intr_info', 'u32', 48, 4, 0],
	['error_code', 'u32', 52, 4, 0],
	['vcpu_id', 'unsigned int', 56, 4, 0],
	['guest_cr3', 'unsigned long', 64, 8, 0],
);
my $format = "name: kvm_exit\nID: $id\nformat:\n";
for my $f (@fields) {
	if (!$f) { $format .= "\n"; next; }
	$format .= "\tfield:$f->[1] $f->[0];\toffset:$f->[2];\tsize:$f->[3];\tsigned:$f->[4];\n";
}
$format .= "\nprint fmt: \"vcpu %u reason %u rip 0x%lx guest_cr3 0x%lx\", " .
	"REC->vcpu_id, REC->exit_reason, REC->guest_rip, REC->guest_cr3\n";

# the record: common fields, then the exit (VMX HLT = 12, isa 1 = VMX)
my $rec = pack('S C C l', $id, 0, 0, 4242) .
	pack('L x4 Q L x4 Q Q L L L x4 Q', 12, 0x401136, 1, 0, 0, 0, 0, 1, 0x12346801);
die "record is not 72 bytes" unless length($rec) == 72;
# type_len = length / 4 (up to 28), time_delta 0
my $data = pack('L', length($rec) / 4) . $rec;
my $cpu_page = pack('Q Q', 1_000_000_000, length($data)) . $data;
$cpu_page .= "\0" x ($page - length($cpu_page));

my $h = "\x17\x08\x44tracing6\0" . pack('C C L', 0, 8, $page);
$h .= "header_page\0" . pack('Q', length($header_page)) . $header_page;
$h .= "header_event\0" . pack('Q', length($header_event)) . $header_event;
$h .= pack('L', 0);					# ftrace formats
$h .= pack('L', 1) . "kvm\0" . pack('L', 1) . pack('Q', length($format)) . $format;
$h .= pack('L', 0);					# kallsyms
$h .= pack('L', 0);					# printk formats
my $cmdlines = "4242 qemu-system-x86\n";
$h .= pack('Q', length($cmdlines)) . $cmdlines;
$h .= pack('L', 1);					# CPUs
$h .= "options  \0" . pack('S', 0);			# no options
$h .= "flyrecord\0";
my $off = length($h) + 16;
$off = ($off + $page - 1) & ~($page - 1);
$h .= pack('Q Q', $off, length($cpu_page));
$h .= "\0" x ($off - length($h));

open(my $fh, '>:raw', $out) or die "$out: $!\n";
print $fh $h, $cpu_page or die "$out: $!\n";
close($fh) or die "$out: $!\n";
