/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TSC, read in order with the reads around it, on any x86-64 CPU.
 * Not RDTSCP: a CPU or vCPU model may lack it (QEMU's qemu64 does; so
 * does the CPU valgrind presents on some hosts, though CPUID says
 * otherwise), and there it faults and kills the agent with SIGILL.  LFENCE
 * then RDTSC, as the kernel's rdtsc_ordered() reads it wherever LFENCE
 * orders RDTSC (every Intel CPU, and every AMD one under Linux, which sets
 * the MSR bit that makes LFENCE dispatch-serializing); the LFENCE after
 * holds back what follows.
 */
#ifndef AGENT_TSC_H
#define AGENT_TSC_H

#include <stdint.h>
#include <x86intrin.h>

static inline uint64_t agent_tsc(void)
{
	uint64_t t;

	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
}

#endif
