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
 * Usage: rlstop --cpu N [--period-ms P] [--total-over-ms F] [--max-seconds S] [--priority R]
 *        rlstop --cpu N --speed-ms T [--memory-mb M] [--pingpong-cpu B] [--priority R]
 * Prints "ready" once it runs on its CPU at its priority, then on SIGTERM or SIGINT (or
 * after S seconds, default 600) prints
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
 * With --speed-ms T it measures instead how fast the CPU runs as this guest sees it, and
 * exits: pinned to the CPU at the same priority, it runs a fixed loop (each iteration one
 * 64-bit multiply and add, each depending on the last: no two overlap) in chunks of
 * CHUNK iterations until T ms have passed, then prints
 *   RESULT-speed=<iterations per microsecond of wall time>
 *   RESULT-speed_ms=<how long it ran, milliseconds>
 * The host's slowing of the virtual CPU shows there: a lower clock, a hyperthread or cache
 * shared with another guest, time taken away (which steal counts only in part). The
 * guest's /proc/cpuinfo cannot say it: its MHz is the host's nominal clock, read once at
 * boot. --priority P sets the real-time priority (default 2; 0: an ordinary task, which
 * other tasks on the CPU slow down, for tests).
 *
 * With --memory-mb M as well it then times the memory as this guest sees it: a walk along
 * one random cycle through M MiB, one pointer per 64-byte cache line, each load depending
 * on the last (no prefetcher guesses it), for as long again, and prints
 *   RESULT-memory_ns=<nanoseconds per load>
 * The register loop above does not see the cache and memory another guest shares: with M
 * below the last-level cache, a neighbour that evicts it, or takes the memory's bandwidth,
 * shows here as longer loads.
 *
 * With --pingpong-cpu B as well it then times how far CPU B is from CPU N as the host
 * places them: a second process, pinned to B at the same priority, and this one pass one
 * cache line back and forth (each writes it once the other has), for as long again, and
 * it prints
 *   RESULT-pingpong_ns=<nanoseconds per round trip>
 * Two virtual CPUs on one core's two hyperthreads pass it through their L1; on two cores
 * of one chiplet, through its shared L3; on two chiplets, across the package: each step
 * costs several times the last. A hypervisor that moves its virtual CPUs between host
 * cores moves this too, and with it what a packet costs that one CPU writes and the other
 * reads (the generator's frames, the router's, the sink's).
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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static double seconds(const struct timespec *t) { return t->tv_sec + t->tv_nsec * 1e-9; }

/* Iterations of the speed loop between two readings of the clock: about 25 us here. */
#define CHUNK 16384

/* CHUNK iterations of a linear congruential step (Knuth's MMIX constants); the empty asm
 * keeps the compiler from folding or vectorising the chain. */
static unsigned long long chunk(unsigned long long x) {
    for (int i = 0; i < CHUNK; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* The speed mode: CHUNK-iteration chunks until ms have passed (one chunk first, untimed,
 * to bring code and stack in), then the iterations per microsecond of wall time. */
static int speed(double ms) {
    struct timespec t0, now;
    unsigned long long x = chunk(1), done = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double start = seconds(&t0), elapsed;
    do {
        x = chunk(x);
        done += CHUNK;
        clock_gettime(CLOCK_MONOTONIC, &now);
        elapsed = seconds(&now) - start;
    } while (elapsed < ms * 1e-3);
    (void)x;
    printf("RESULT-speed=%.3f\nRESULT-speed_ms=%.3f\n", done / (elapsed * 1e6), elapsed * 1e3);
    return 0;
}

/* The memory mode: a random cyclic walk through mb MiB, one pointer per cache line
 * (Sattolo's shuffle makes one cycle through every line), once around untimed to bring it
 * in, then timed for ms in chunks; the nanoseconds per load. */
#define LINE 64
#define WALK 4096
static int memory(double ms, double mb) {
    size_t lines = (size_t)(mb * 1024 * 1024) / LINE;
    char *buf = aligned_alloc(LINE, lines * LINE);
    size_t *order = malloc(lines * sizeof *order);
    if (!buf || !order || lines < 2) {
        fprintf(stderr, "rlstop: cannot allocate %g MiB for the memory walk\n", mb);
        return 1;
    }
    unsigned long long r = 88172645463325252ULL;
    for (size_t i = 0; i < lines; i++) order[i] = i;
    for (size_t i = lines - 1; i > 0; i--) { /* Sattolo: j < i, so one cycle */
        r ^= r << 13; r ^= r >> 7; r ^= r << 17;
        size_t j = r % i, t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++) *(char **)(buf + order[i] * LINE) = buf + order[(i + 1) % lines] * LINE;
    free(order);
    char *p = buf;
    for (size_t i = 0; i < lines; i++) p = *(char **)p;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double start = seconds(&t0), elapsed;
    unsigned long long loads = 0;
    do {
        for (int i = 0; i < WALK; i++) p = *(char **)p;
        loads += WALK;
        clock_gettime(CLOCK_MONOTONIC, &now);
        elapsed = seconds(&now) - start;
    } while (elapsed < ms * 1e-3);
    __asm__ volatile("" : : "r"(p));
    printf("RESULT-memory_ns=%.3f\n", elapsed * 1e9 / loads);
    free(buf);
    return 0;
}

/* Pins the calling process to cpu at SCHED_FIFO priority (0: an ordinary task); 0 or 2. */
static int pin(int cpu, int priority) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "rlstop: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
        return 2;
    }
    struct sched_param prio = {.sched_priority = priority};
    if (priority > 0 && sched_setscheduler(0, SCHED_FIFO, &prio) != 0) {
        fprintf(stderr, "rlstop: cannot take SCHED_FIFO priority %d: %s\n", priority, strerror(errno));
        return 2;
    }
    return 0;
}

/* The ping-pong mode: one cache line, shared with a child pinned to other. The child
 * answers every odd turn with the next even one; this process counts round trips for ms.
 * The child starts by writing turn 2, which says it runs on its CPU. A wait longer than
 * a second (the child gone, or its CPU never given to it) ends the probe with an error. */
struct line {
    volatile unsigned long long turn;
    volatile int quit;
} __attribute__((aligned(64)));

/* Both sides spin without a pause instruction: a pause would add its own tens of cycles to
 * every round trip, and the probe is short (one --speed-ms). */
static int wait_turn(struct line *l, unsigned long long want, double deadline) {
    struct timespec now;
    for (unsigned spins = 1;; spins++) {
        if (__atomic_load_n(&l->turn, __ATOMIC_ACQUIRE) == want) return 0;
        if (!(spins & 4095)) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (seconds(&now) > deadline) return 1;
        }
    }
}

static int pingpong(double ms, int other, int priority) {
    struct line *l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED) {
        fprintf(stderr, "rlstop: cannot map the ping-pong line: %s\n", strerror(errno));
        return 1;
    }
    fflush(stdout);
    pid_t parent = getpid(), child = fork();
    if (child < 0) {
        fprintf(stderr, "rlstop: cannot start the ping-pong partner: %s\n", strerror(errno));
        return 1;
    }
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the probe... */
        if (getppid() != parent) _exit(0); /* ...even one that died before that */
        if (pin(other, priority)) _exit(2);
        __atomic_store_n(&l->turn, 2, __ATOMIC_RELEASE);
        while (!l->quit) {
            unsigned long long t = __atomic_load_n(&l->turn, __ATOMIC_ACQUIRE);
            if (t & 1) __atomic_store_n(&l->turn, t + 1, __ATOMIC_RELEASE);
        }
        _exit(0);
    }
    /* The child starts on this CPU at this priority, where this process spins without
     * yielding: move it to its own CPU from here, before it ever needs to run. */
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(other, &set);
    int rc = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (sched_setaffinity(child, sizeof set, &set) != 0) {
        fprintf(stderr, "rlstop: cannot pin the ping-pong partner to CPU %d: %s\n", other, strerror(errno));
        rc = 2;
    } else if (wait_turn(l, 2, seconds(&t0) + 1)) {
        fprintf(stderr, "rlstop: the ping-pong partner on CPU %d did not start within 1 s\n", other);
        rc = 1;
    } else {
        unsigned long long t = 2, trips = 0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double start = seconds(&t0), elapsed;
        do {
            for (int i = 0; i < 256 && !rc; i++, t += 2) {
                __atomic_store_n(&l->turn, t + 1, __ATOMIC_RELEASE);
                rc = wait_turn(l, t + 2, start + ms * 1e-3 + 1);
            }
            trips += 256;
            clock_gettime(CLOCK_MONOTONIC, &now);
            elapsed = seconds(&now) - start;
        } while (!rc && elapsed < ms * 1e-3);
        if (rc) fprintf(stderr, "rlstop: the ping-pong partner on CPU %d stopped answering\n", other);
        else printf("RESULT-pingpong_ns=%.3f\n", elapsed * 1e9 / trips);
    }
    l->quit = 1;
    kill(child, SIGKILL); /* it may spin where quit is not seen soon: a CPU stopped */
    waitpid(child, NULL, 0);
    munmap(l, sizeof *l);
    return rc;
}

int main(int argc, char **argv) {
    int cpu = -1;
    int priority = 2, other = -1;
    double max_seconds = 600, period_ms = 1, over_ms = -1, speed_ms = 0, memory_mb = 0;
    static const struct option longopts[] = {{"cpu", required_argument, 0, 'c'},
                                              {"period-ms", required_argument, 0, 'p'},
                                              {"max-seconds", required_argument, 0, 'm'},
                                              {"total-over-ms", required_argument, 0, 't'},
                                              {"speed-ms", required_argument, 0, 's'},
                                              {"priority", required_argument, 0, 'r'},
                                              {"memory-mb", required_argument, 0, 'M'},
                                              {"pingpong-cpu", required_argument, 0, 'P'},
                                              {0, 0, 0, 0}};
    for (int o; (o = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (o == 'c') cpu = atoi(optarg);
        else if (o == 'p') period_ms = atof(optarg);
        else if (o == 'm') max_seconds = atof(optarg);
        else if (o == 't') over_ms = atof(optarg);
        else if (o == 's') speed_ms = atof(optarg);
        else if (o == 'r') priority = atoi(optarg);
        else if (o == 'M') memory_mb = atof(optarg);
        else if (o == 'P') other = atoi(optarg);
        else return 1;
    }
    if (cpu < 0 || !(period_ms >= 0.1 && period_ms <= 1000) || !(speed_ms >= 0 && speed_ms <= 10000) ||
        priority < 0 || priority > 99 || !(memory_mb >= 0 && memory_mb <= 4096) || (memory_mb > 0 && !(speed_ms > 0)) ||
        (other >= 0 && (other == cpu || !(speed_ms > 0)))) {
        fprintf(stderr, "rlstop: --cpu N is required, --period-ms must be 0.1..1000, --speed-ms 0..10000, "
                        "--priority 0..99, --memory-mb 0..4096 (with --speed-ms), --pingpong-cpu another CPU "
                        "than N (with --speed-ms)\n");
        return 1;
    }
    long period_ns = (long)(period_ms * 1e6);
    double over = (over_ms < 0 ? period_ms : over_ms) * 1e-3;
    if (pin(cpu, priority)) return 2;
    if (speed_ms > 0) {
        int rc = speed(speed_ms);
        fflush(stdout);
        if (!rc && memory_mb > 0) rc = memory(speed_ms, memory_mb);
        return rc || other < 0 ? rc : pingpong(speed_ms, other, priority);
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
