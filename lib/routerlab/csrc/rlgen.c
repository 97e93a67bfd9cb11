/*
 * rlgen.c -- routerlab's open-loop UDP traffic generator over AF_PACKET.
 *
 * Sends prebuilt Ethernet/IPv4/UDP frames on one interface at a requested packet rate
 * for a fixed time, in sendmmsg() batches, never waiting for the router: a send the
 * router refuses at its input (ENOBUFS: the veth enqueue into its backlog failed) is
 * counted and skipped, not retried, so overload shows as loss rather than as a lower
 * sending rate. Sends refused by our own socket (EAGAIN) are counted apart: they are the
 * generator's limit, never the router's.
 *
 * Output: RESULT-<name>=<value> lines on stdout (one per metric). max_late_ms is how far
 * behind its schedule the generator fell at worst (milliseconds): what it then owes is
 * made up at no more than CATCHUP times the rate, past the duration if need be.
 * lags counts the times it fell more than --lag-over-ms behind (default 5; one lag lasts
 * until it is back within LAG_END_MS of its schedule) and lagged_ms adds up what each owed:
 * how far behind it fell at worst, or, where it was held up again while it made up a lag,
 * how far behind it was when the lag began and every rise of more than LAG_END_MS in one
 * batch after, if that is more (the load of all those lags together, milliseconds).
 * behind_ms is how long it was more than LAG_END_MS behind its schedule, its waits
 * included, less the batches a hold of more than --lag-over-ms interrupted (those are
 * lags), and behind_frames the frames of those batches: made up at CATCHUP times the rate
 * a lag keeps more than the rate; a generator slower than the rate, or held up for more
 * than the catch-up leaves, keeps less. Where one paced batch lasts longer than
 * --lag-over-ms (under 6,400 pps in batches of 32, at the default), none counts.
 *
 * --print-frames prints the frames it would send, one per line (1 or 0: whether the frame
 * is meant to pass the firewall, then the frame in hex), and sends nothing: the XDP
 * generator (csrc/rlxdpgen.c) sends the same frames.
 *
 * Built by routerlab at first use with: gcc -O2 -o rlgen rlgen.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_TEMPLATES 1024
#define MAX_BATCH 256
#define MAX_FRAME 1518
/* what a lag owes is sent at no more than this many times the rate. Sent at once, it
 * reached the router as one burst at the generator's top speed, which overflowed the XDP
 * router's 256-slot ring at any load (docs/journal/2026-12-07-the-machine-s-agent-on-the-router-cpu.md).
 * At 1.5 times the rate, a router with less than half the rate to spare (any router near its
 * PDR) lost most of what the lag owed, and the machine's agent holds rlgen back for a few
 * ms about once a second: click lost a steady share just under its criterion at loads
 * well under its capacity. A router with a twentieth of the rate to spare takes this
 * catch-up without a loss (docs/journal/2026-12-07-the-generator-s-catch-up-near-capacity.md). */
#define CATCHUP 1.05

/* a lag ends back within this of the schedule: lateness that hovers around the
 * --lag-over-ms threshold is one lag, not many */
#define LAG_END_MS 1.0

struct opts {
    const char *ifname;
    uint8_t smac[6], dmac[6];
    struct in_addr src, dst;
    int dst_count;       /* destinations: dst, dst+1, ... (multi-flow) */
    int random_ports;    /* random source/destination ports per template */
    int sport, dport;
    int frame_size;      /* on the wire, with FCS (64 = minimum) */
    double rate;         /* packets/s; 0 = as fast as possible */
    double duration;     /* seconds */
    int batch;
    double drop_share;   /* share of packets addressed to drop_dport (the firewall drops them) */
    int drop_dport;
    unsigned seed;
    double lag_over_ms;  /* a lag counts in lags and lagged_ms once it passes this */
};

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static void die(const char *msg) { fprintf(stderr, "rlgen: %s: %s\n", msg, strerror(errno)); exit(2); }
static void usage(const char *msg) { fprintf(stderr, "rlgen: %s\n", msg); exit(2); }

static int parse_mac(const char *s, uint8_t *mac)
{
    return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
                  &mac[5]) == 6 ? 0 : -1;
}

static uint16_t csum16(const void *data, int len)
{
    const uint16_t *p = data;
    uint32_t sum = 0;
    for (; len > 1; len -= 2) sum += *p++;
    if (len) sum += *(const uint8_t *)p;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* One frame: Ethernet, IPv4 (checksummed), UDP with checksum 0 (allowed for IPv4). */
static int build(uint8_t *buf, const struct opts *o, uint32_t dst, int sport, int dport)
{
    int len = o->frame_size - 4; /* the NIC (here: nobody) adds the 4-byte FCS */
    struct ether_header *eth = (void *)buf;
    struct iphdr *ip = (void *)(buf + sizeof *eth);
    struct udphdr *udp = (void *)(ip + 1);
    memset(buf, 0, len);
    memcpy(eth->ether_dhost, o->dmac, 6);
    memcpy(eth->ether_shost, o->smac, 6);
    eth->ether_type = htons(ETHERTYPE_IP);
    ip->version = 4;
    ip->ihl = 5;
    ip->tot_len = htons(len - sizeof *eth);
    ip->ttl = 64;
    ip->protocol = IPPROTO_UDP;
    ip->saddr = o->src.s_addr;
    ip->daddr = dst;
    ip->check = csum16(ip, sizeof *ip);
    udp->source = htons(sport);
    udp->dest = htons(dport);
    udp->len = htons(len - sizeof *eth - sizeof *ip);
    return len;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void wait_until(double t)
{
    double d = t - now();
    if (d > 200e-6) {
        struct timespec ts = {.tv_sec = (time_t)(d - 100e-6), .tv_nsec = (long)(((d - 100e-6) - (time_t)(d - 100e-6)) * 1e9)};
        nanosleep(&ts, NULL);
    }
    while (now() < t && !stop) ; /* spin the last stretch: sleep granularity is too coarse */
}

int main(int argc, char **argv)
{
    struct opts o = {.dst_count = 1, .sport = 1024, .dport = 1024, .frame_size = 64, .rate = 0,
                     .duration = 1, .batch = 32, .drop_share = 0, .drop_dport = 9, .seed = 1, .lag_over_ms = 5};
    int have_src = 0, have_dst = 0, have_smac = 0, have_dmac = 0;
    static struct option lo[] = {
        {"ifname", 1, 0, 'i'}, {"smac", 1, 0, 'S'}, {"dmac", 1, 0, 'D'}, {"src", 1, 0, 's'},
        {"dst", 1, 0, 'd'}, {"dst-count", 1, 0, 'n'}, {"random-ports", 0, 0, 'R'},
        {"sport", 1, 0, 'p'}, {"dport", 1, 0, 'P'}, {"frame-size", 1, 0, 'f'},
        {"rate", 1, 0, 'r'}, {"duration", 1, 0, 't'}, {"batch", 1, 0, 'b'},
        {"drop-share", 1, 0, 'x'}, {"drop-dport", 1, 0, 'X'}, {"seed", 1, 0, 'z'},
        {"lag-over-ms", 1, 0, 'L'}, {"print-frames", 0, 0, 'F'}, {0, 0, 0, 0}};
    int print_frames = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'i': o.ifname = optarg; break;
        case 'S': if (parse_mac(optarg, o.smac)) usage("bad --smac"); have_smac = 1; break;
        case 'D': if (parse_mac(optarg, o.dmac)) usage("bad --dmac"); have_dmac = 1; break;
        case 's': if (!inet_aton(optarg, &o.src)) usage("bad --src"); have_src = 1; break;
        case 'd': if (!inet_aton(optarg, &o.dst)) usage("bad --dst"); have_dst = 1; break;
        case 'n': o.dst_count = atoi(optarg); break;
        case 'R': o.random_ports = 1; break;
        case 'p': o.sport = atoi(optarg); break;
        case 'P': o.dport = atoi(optarg); break;
        case 'f': o.frame_size = atoi(optarg); break;
        case 'r': o.rate = atof(optarg); break;
        case 't': o.duration = atof(optarg); break;
        case 'b': o.batch = atoi(optarg); break;
        case 'x': o.drop_share = atof(optarg); break;
        case 'X': o.drop_dport = atoi(optarg); break;
        case 'z': o.seed = (unsigned)atoi(optarg); break;
        case 'L': o.lag_over_ms = atof(optarg); break;
        case 'F': print_frames = 1; break;
        default: usage("unknown option");
        }
    }
    if (!o.ifname || !have_src || !have_dst || !have_smac || !have_dmac)
        usage("need --ifname --smac --dmac --src --dst");
    if (o.frame_size < 64 || o.frame_size > MAX_FRAME) usage("--frame-size must be 64..1518");
    if (o.batch < 1 || o.batch > MAX_BATCH) usage("--batch must be 1..256");
    if (o.rate < 0 || o.duration <= 0) usage("--rate must be >= 0 and --duration > 0");
    if (o.dst_count < 1 || o.dst_count > MAX_TEMPLATES) usage("--dst-count must be 1..1024");
    if (o.drop_share < 0 || o.drop_share >= 1) usage("--drop-share must be in [0, 1)");
    if (!(o.lag_over_ms >= LAG_END_MS)) usage("--lag-over-ms must be >= 1");

    /* Templates: one per flow (single flow: one), a share of them towards drop_dport. */
    int ntpl = (o.dst_count > 1 || o.random_ports) ? MAX_TEMPLATES : 1;
    if (o.drop_share > 0 && ntpl == 1) ntpl = 2;
    static uint8_t frames[MAX_TEMPLATES][MAX_FRAME];
    static int legit[MAX_TEMPLATES];
    int len = 0;
    srand(o.seed);
    for (int t = 0; t < ntpl; t++) {
        uint32_t dst = htonl(ntohl(o.dst.s_addr) + (uint32_t)(t % o.dst_count));
        int sport = o.random_ports ? 1024 + rand() % 60000 : o.sport;
        int dport = o.random_ports ? 1024 + rand() % 60000 : o.dport;
        /* spread dropped templates evenly: t is dropped when floor((t+1)s) > floor(ts) */
        int drop = (int)((t + 1) * o.drop_share) > (int)(t * o.drop_share);
        if (drop) dport = o.drop_dport;
        else if (dport == o.drop_dport) dport++;
        legit[t] = !drop;
        len = build(frames[t], &o, dst, sport, dport);
    }

    if (print_frames) {
        for (int t = 0; t < ntpl; t++) {
            printf("%d ", legit[t]);
            for (int k = 0; k < len; k++) printf("%02x", frames[t][k]);
            printf("\n");
        }
        return 0;
    }

    int fd = socket(AF_PACKET, SOCK_RAW, 0); /* protocol 0: send only, receive nothing */
    if (fd < 0) die("socket(AF_PACKET)");
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_ifindex = if_nametoindex(o.ifname)};
    if (!sll.sll_ifindex) die(o.ifname);
    if (bind(fd, (void *)&sll, sizeof sll) < 0) die("bind");
    int one = 1, sndbuf = 256 << 20;
    /* a large buffer so that our own socket never refuses a send (EAGAIN) */
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf) < 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);

    struct mmsghdr msgs[MAX_BATCH];
    struct iovec iov[MAX_BATCH];
    memset(msgs, 0, sizeof msgs);

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    unsigned long long sent = 0, refused = 0, blocked = 0, legit_sent = 0, legit_refused = 0;
    unsigned long long i = 0; /* index of the next packet in the schedule */
    double t0 = now(), end = t0 + o.duration, max_late = 0, lagged = 0, lag = 0;
    /* a lag near the end is still made up, as the XDP generator does (csrc/rlxdpgen.c):
     * the schedule's frames all leave unless that takes past twice the duration and 0.5 s */
    double give_up = o.rate > 0 ? t0 + 2 * o.duration + 0.5 : end;
    double paced = 0; /* the earliest the next batch leaves: catching up, CATCHUP times the rate */
    unsigned long long lags = 0;
    double owed = 0, prev_late = 0; /* this lag's load: see lagged_ms above */
    /* the batches sent behind the schedule: the rate kept while making up a lag */
    double behind = 0, behind_since = -1;
    unsigned long long behind_frames = 0;
    while (!stop) {
        double t = now();
        if (behind_since >= 0) {
            if (t - behind_since <= o.lag_over_ms * 1e-3) {
                behind += t - behind_since;
                behind_frames += o.batch;
            }
            behind_since = -1;
        }
        if (t >= give_up) break;
        if (o.rate > 0) {
            double due = t0 + i / o.rate;
            if (due >= end) break;
            double late = t - due;
            if (late > max_late) max_late = late;
            if (late > o.lag_over_ms * 1e-3 || (lag > 0 && late > LAG_END_MS * 1e-3)) {
                if (lag == 0) owed = late;
                else if (late - prev_late > LAG_END_MS * 1e-3) owed += late - prev_late; /* held again */
                if (late > lag) lag = late; /* the worst of this lag so far */
            } else if (lag > 0) {
                lags++;
                lagged += owed > lag ? owed : lag;
                lag = 0;
            }
            prev_late = late;
            if (late > LAG_END_MS * 1e-3) behind_since = t;
            double at = due > paced ? due : paced;
            if (at > t) wait_until(at);
            paced = (at > t ? at : t) + o.batch / (CATCHUP * o.rate);
        }
        int n = o.batch;
        for (int k = 0; k < n; k++) {
            int tpl = (i + k) % ntpl;
            iov[k].iov_base = frames[tpl];
            iov[k].iov_len = len;
            msgs[k].msg_hdr.msg_iov = &iov[k];
            msgs[k].msg_hdr.msg_iovlen = 1;
        }
        int off = 0;
        while (off < n) {
            int r = sendmmsg(fd, msgs + off, n - off, MSG_DONTWAIT);
            if (r > 0) {
                for (int k = off; k < off + r; k++) legit_sent += legit[(i + k) % ntpl];
                sent += r;
                off += r;
                if (off < n) {
                    /* a partial batch stopped at an error sendmmsg does not report: with our
                     * socket buffer that is the router's refusal; count it, do not retry */
                    refused++;
                    legit_refused += legit[(i + off) % ntpl];
                    off++;
                }
            } else if (errno == ENOBUFS) {
                refused++;
                legit_refused += legit[(i + off) % ntpl];
                off++;
            } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
                blocked += n - off; /* our own socket is full: the generator's limit */
                break;
            } else if (errno == EINTR) {
                continue;
            } else {
                die("sendmmsg");
            }
        }
        i += n;
    }
    if (lag > 0) {
        lags++;
        lagged += owed > lag ? owed : lag;
    }
    double elapsed = now() - t0;
    if (behind_since >= 0 && t0 + elapsed - behind_since <= o.lag_over_ms * 1e-3) {
        behind += t0 + elapsed - behind_since;
        behind_frames += o.batch;
    }
    double requested = o.rate > 0 ? o.rate * o.duration : 0;
    printf("RESULT-requested=%.0f\n", requested);
    printf("RESULT-scheduled=%llu\n", i);
    printf("RESULT-sent=%llu\n", sent);
    printf("RESULT-refused=%llu\n", refused);
    printf("RESULT-blocked=%llu\n", blocked);
    printf("RESULT-legit_sent=%llu\n", legit_sent);
    printf("RESULT-legit_refused=%llu\n", legit_refused);
    printf("RESULT-elapsed=%.6f\n", elapsed);
    printf("RESULT-frame_len=%d\n", len);
    printf("RESULT-interrupted=%d\n", (int)stop);
    printf("RESULT-max_late_ms=%.3f\n", max_late * 1e3);
    printf("RESULT-lags=%llu\n", lags);
    printf("RESULT-lagged_ms=%.3f\n", lagged * 1e3);
    printf("RESULT-behind_ms=%.3f\n", behind * 1e3);
    printf("RESULT-behind_frames=%llu\n", behind_frames);
    return 0;
}
