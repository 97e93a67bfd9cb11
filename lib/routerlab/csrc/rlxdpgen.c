/* rlxdpgen.c -- routerlab's XDP generator: rlgen's frames run through the generator's XDP
 * program (bpf/xdp_gen.c) with BPF_PROG_RUN and live frames (kernel 5.18 or later), which
 * paces the frames in the program and redirects each one due out of the generator's veth.
 * Open loop: nothing the receiver does slows it.
 *
 *   rlgen ... --print-frames | rlxdpgen OBJ IFINDEX RATE_PPS DURATION_S BURST
 *
 * The frames come on stdin as rlgen prints them (one per line: 1 or 0, meant to pass the
 * firewall or not, then the frame in hex; at most 1,024 frames, all of one length, at most
 * 1,518 bytes), and are sent in turn, in bursts of BURST frames back to back (as rlgen's
 * sendmmsg batches), behind the schedule at no more than 1.5 times the rate (the program's
 * CATCHUP_NUM). RATE_PPS 0 sends as fast as it can for DURATION_S. Prints one line:
 *   sent=N legit=N span_s=S late_ms=L lagged_ms=G runs=R
 * sent: frames redirected, legit of them meant to pass (a redirect the receiving veth
 * refuses is dropped and counted by its peer's counters, not here); span_s: from the first
 * frame to the last burst's first; late_ms: how far behind its schedule it fell at worst;
 * lagged_ms: each lag over 5 ms, its worst, added up (as rlgen reports them); runs: program
 * runs, sent or early.
 *
 * One BPF_PROG_RUN call with live frames costs a wait of a few tens of milliseconds at
 * its end (measured here), so the frames are sent in one call that a timer ends (a signal
 * ends the kernel's loop): no gap in the schedule but after the last frame. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define HDR 48 /* the headers the program writes into every frame (bpf/xdp_gen.c) */
#define MAX_TEMPLATES 1024
#define MAX_FRAME 1518

struct gen_state {
    __u64 ifindex, interval_ps, total, start_ns, sent, late_max_ns, lagged_ns, lag_worst_ns, runs, last_ns;
    __u64 templates, legit, burst, catch_ns, catch_sent;
};

struct template {
    __u8 hdr[HDR];
    __u32 legit;
};

/* runs of one call: more than any trial needs (it ends by the timer) */
#define REPEAT 0x7fffffffU
/* program runs per batch, the kernel's most (TEST_XDP_MAX_BATCH): the redirected frames are
 * flushed, and the receiver woken, once a batch; fewer flushes are what the larger batch
 * saves */
#define BATCH 256

static void on_alarm(int sig) { (void)sig; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int unhex(const char *hex, unsigned char *out, int max)
{
    int n = strlen(hex) / 2;
    if (n > max || (int)strlen(hex) != 2 * n)
        return -1;
    for (int i = 0; i < n; i++)
        if (sscanf(hex + 2 * i, "%2hhx", &out[i]) != 1)
            return -1;
    return n;
}

static void arm(double seconds)
{
    struct itimerval t = {{0, 0}, {(long)seconds, (long)((seconds - (long)seconds) * 1e6)}};
    setitimer(ITIMER_REAL, &t, NULL);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: rlgen ... --print-frames | %s OBJ IFINDEX RATE_PPS DURATION_S BURST\n", argv[0]);
        return 2;
    }
    double rate = atof(argv[3]), duration = atof(argv[4]);
    int burst = atoi(argv[5]);
    if (duration <= 0 || rate < 0 || burst < 1 || burst > 4096) {
        fprintf(stderr, "rlxdpgen: bad rate, duration or burst\n");
        return 2;
    }
    static struct template tpl[MAX_TEMPLATES];
    unsigned char frame[MAX_FRAME];
    char line[2 * MAX_FRAME + 16], hex[2 * MAX_FRAME + 2];
    int ntpl = 0, len = 0;
    while (fgets(line, sizeof(line), stdin)) {
        int legit, n;
        if (sscanf(line, "%d %3037s", &legit, hex) != 2 || ntpl == MAX_TEMPLATES ||
            (n = unhex(hex, frame, sizeof(frame))) < HDR || (len && n != len)) {
            fprintf(stderr, "rlxdpgen: bad frame on line %d of stdin\n", ntpl + 1);
            return 2;
        }
        len = n;
        memcpy(tpl[ntpl].hdr, frame, HDR);
        tpl[ntpl++].legit = legit != 0;
    }
    if (!ntpl) {
        fprintf(stderr, "rlxdpgen: no frames on stdin\n");
        return 2;
    }
    struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
    if (!obj || bpf_object__load(obj)) {
        fprintf(stderr, "rlxdpgen: loading %s failed: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct bpf_program *prog = bpf_object__find_program_by_name(obj, "xdp_gen");
    struct bpf_map *map = bpf_object__find_map_by_name(obj, "state");
    struct bpf_map *tmap = bpf_object__find_map_by_name(obj, "templates");
    if (!prog || !map || !tmap) {
        fprintf(stderr, "rlxdpgen: %s lacks xdp_gen or its state\n", argv[1]);
        return 1;
    }
    __u32 key = 0;
    struct gen_state s = {0};
    s.ifindex = strtoul(argv[2], NULL, 10);
    s.interval_ps = rate > 0 ? (__u64)(1e12 / rate + 0.5) : 0;
    s.total = rate > 0 ? (__u64)(rate * duration + 0.5) : UINT64_MAX;
    s.templates = ntpl;
    s.burst = burst;
    for (__u32 t = 0; t < (__u32)ntpl; t++)
        if (bpf_map__update_elem(tmap, &t, sizeof(t), &tpl[t], sizeof(tpl[t]), 0)) {
            fprintf(stderr, "rlxdpgen: setting the frames failed: %s\n", strerror(errno));
            return 1;
        }
    if (bpf_map__update_elem(map, &key, sizeof(key), &s, sizeof(s), 0)) {
        fprintf(stderr, "rlxdpgen: setting the state failed: %s\n", strerror(errno));
        return 1;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm; /* no SA_RESTART: the signal ends the kernel's loop */
    sigaction(SIGALRM, &sa, NULL);
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = len, .repeat = REPEAT,
                .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = BATCH);
    int fd = bpf_program__fd(prog);
    /* the schedule ends DURATION_S after the first frame; a generator behind it gets as
     * long again to catch up, after which what it did not send counts against it */
    double start = now_s(), limit = rate > 0 ? 2 * duration + 0.5 : duration;
    for (;;) {
        double left = limit - (now_s() - start);
        if (left <= 0)
            break;
        /* the first call ends just after the schedule does; another only for a generator
         * behind it, which then has what is left of the limit */
        double first = duration + 0.05;
        arm(rate > 0 && s.runs == 0 && first < left ? first : left);
        int rc = bpf_prog_test_run_opts(fd, &opts);
        if (rc && errno != EINTR) {
            fprintf(stderr, "rlxdpgen: BPF_PROG_RUN with live frames failed: %s\n", strerror(errno));
            return 1;
        }
        if (bpf_map__lookup_elem(map, &key, sizeof(key), &s, sizeof(s), 0))
            return 1;
        if (s.sent >= s.total)
            break;
    }
    if (s.lag_worst_ns)
        s.lagged_ns += s.lag_worst_ns;
    printf("sent=%llu legit=%llu span_s=%.6f late_ms=%.3f lagged_ms=%.3f runs=%llu\n", (unsigned long long)s.sent,
           (unsigned long long)s.legit,
           s.sent ? (s.last_ns - s.start_ns) * 1e-9 : 0.0, s.late_max_ns * 1e-6, s.lagged_ns * 1e-6,
           (unsigned long long)s.runs);
    bpf_object__close(obj);
    return 0;
}
