/*
 * rlstop.c -- how long one CPU stops: a probe of the router's CPU during a trial.
 *
 * On this kind of virtual machine a CPU stops now and then for 5-11 ms (the hypervisor:
 * it happens on an idle machine too) without the steal count showing it; a router whose
 * CPU stops longer than its queue lasts loses packets that no setting of ours could
 * save. The probe tells those trials apart: pinned to one CPU at real-time priority
 * SCHED_FIFO 2 (above every ordinary task, the router's engine processes among them, and
 * above the router's receive thread at SCHED_FIFO 1), it asks to wake every PERIOD and records how late each
 * wake-up was. A late wake-up means nothing ran it: the CPU was stopped, or in interrupt
 * and softirq work, or (on a kernel without preemption) in another task's kernel code: up
 * to about a jiffy (4 ms at HZ=250). That work drains the router's queue rather than
 * filling it, which is why routerlab holds a reading only against a loss it can account
 * for (routerlab.measuring.validation).
 *
 * Usage: rlstop --cpu N [--period-ms P] [--total-over-ms F] [--max-seconds S]. Prints
 * "ready" once it runs on its CPU at its priority, then on SIGTERM or SIGINT (or after S
 * seconds, default 600) prints
 *   RESULT-max_stop_ms=<longest lateness of a wake-up, milliseconds>
 *   RESULT-stops=<wake-ups later than F (default: P)>
 *   RESULT-stopped_ms=<their lateness added up, milliseconds>
 *   RESULT-wakeups=<count>
 * The longest stop says whether the router's queue could overflow; the total bounds the
 * packets all the stops together held back. F keeps a busy router's own work out of the
 * total: on a saturated CPU nearly every wake-up is that late.
 * A stop of d ms reads as d - P to d: the period P (default 1 ms; routerlab asks for 2)
 * trades that precision against the probe's own CPU time. Exits 2 when it cannot pin
 * itself or take its priority (it needs CAP_SYS_NICE): a probe at ordinary priority would
 * count the router's own work as stops.
 *
 * Built by routerlab at first use with: gcc -O2 -o rlstop rlstop.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static double seconds(const struct timespec *t) { return t->tv_sec + t->tv_nsec * 1e-9; }

int main(int argc, char **argv) {
    int cpu = -1;
    double max_seconds = 600, period_ms = 1, over_ms = -1;
    static const struct option longopts[] = {{"cpu", required_argument, 0, 'c'},
                                              {"period-ms", required_argument, 0, 'p'},
                                              {"max-seconds", required_argument, 0, 'm'},
                                              {"total-over-ms", required_argument, 0, 't'},
                                              {0, 0, 0, 0}};
    for (int o; (o = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (o == 'c') cpu = atoi(optarg);
        else if (o == 'p') period_ms = atof(optarg);
        else if (o == 'm') max_seconds = atof(optarg);
        else if (o == 't') over_ms = atof(optarg);
        else return 1;
    }
    if (cpu < 0 || !(period_ms >= 0.1 && period_ms <= 1000)) {
        fprintf(stderr, "rlstop: --cpu N is required, --period-ms must be 0.1..1000\n");
        return 1;
    }
    long period_ns = (long)(period_ms * 1e6);
    double over = (over_ms < 0 ? period_ms : over_ms) * 1e-3;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "rlstop: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
        return 2;
    }
    struct sched_param prio = {.sched_priority = 2};
    if (sched_setscheduler(0, SCHED_FIFO, &prio) != 0) {
        fprintf(stderr, "rlstop: cannot take SCHED_FIFO priority 2: %s\n", strerror(errno));
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: the signal ends the sleep */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("ready\n");
    fflush(stdout);

    struct timespec due, now;
    clock_gettime(CLOCK_MONOTONIC, &due);
    double start = seconds(&due), max_late = 0, stopped = 0;
    long wakeups = 0, stops = 0;
    while (!stop) {
        due.tv_nsec += period_ns;
        while (due.tv_nsec >= 1000000000) {
            due.tv_nsec -= 1000000000;
            due.tv_sec++;
        }
        if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) != 0)
            continue; /* a signal: the loop test ends it */
        clock_gettime(CLOCK_MONOTONIC, &now);
        double late = seconds(&now) - seconds(&due);
        if (late > max_late) max_late = late;
        wakeups++;
        if (late > over) {
            stops++;
            stopped += late;
        }
        /* after a stop, wake one period from now, not at every missed period at once */
        if (late * 1e9 > period_ns) due = now;
        if (seconds(&now) - start > max_seconds) break;
    }
    printf("RESULT-max_stop_ms=%.3f\nRESULT-stops=%ld\nRESULT-stopped_ms=%.3f\nRESULT-wakeups=%ld\n",
           max_late * 1e3, stops, stopped * 1e3, wakeups);
    return 0;
}
