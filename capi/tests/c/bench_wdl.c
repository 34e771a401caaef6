/*
 * bench_wdl: WDL probes per second from C, on one thread, warm (capi/README.md, "Speed").
 *
 * Usage: bench_wdl TABLES SIGNATURE [POSITIONS] [ROUNDS] [CACHE_MIB]
 *   e.g. bench_wdl /path/to/tables KQRvKR 1000000 5 1024
 *
 * Draws POSITIONS random placements of SIGNATURE's men (either side to move, clock 0),
 * keeps the legal ones (a first pass of tbs_probe_wdl, which also opens the tables and fills
 * the block cache), then times ROUNDS passes of tbs_probe_wdl over them.
 *
 * Build (from the repository's root, after cargo build --release):
 *   cc -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Icapi/include capi/tests/c/bench_wdl.c \
 *      -Ltarget/release -ltbstream_c -Wl,-rpath,$PWD/target/release -o /tmp/bench_wdl
 */
#include "tbstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    uint64_t white, black, kings, queens, rooks, bishops, knights, pawns;
    unsigned turn;
} board;

static uint64_t state = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void) { /* xorshift64* */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dULL;
}

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Wall time, and this process's CPU time (what the probes cost on a shared machine). */
static double now(void) { return seconds(CLOCK_MONOTONIC); }
static double cpu(void) { return seconds(CLOCK_PROCESS_CPUTIME_ID); }

/* Puts one man of each letter of `side` ("KQR") of a colour on empty squares. */
static void place(board *b, const char *side, size_t len, int white) {
    for (size_t i = 0; i < len; i++) {
        uint64_t bit;
        int pawn = side[i] == 'P';
        do {
            unsigned sq = (unsigned)(next() % 64);
            bit = 1ULL << sq;
            if (pawn && (sq < 8 || sq >= 56)) bit = 0;
        } while (!bit || ((b->white | b->black) & bit));
        if (white) b->white |= bit; else b->black |= bit;
        switch (side[i]) {
        case 'K': b->kings |= bit; break;
        case 'Q': b->queens |= bit; break;
        case 'R': b->rooks |= bit; break;
        case 'B': b->bishops |= bit; break;
        case 'N': b->knights |= bit; break;
        case 'P': b->pawns |= bit; break;
        }
    }
}

static tbs_result probe(const tbs_tablebase *tb, const board *b) {
    return tbs_probe_wdl(tb, b->white, b->black, b->kings, b->queens, b->rooks, b->bishops, b->knights, b->pawns, 0,
                         0, 0, b->turn);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s TABLES SIGNATURE [POSITIONS] [ROUNDS] [CACHE_MIB]\n", argv[0]);
        return 2;
    }
    const char *sig = argv[2], *v = strchr(sig, 'v');
    size_t n = argc > 3 ? strtoul(argv[3], NULL, 10) : 1000000;
    int rounds = argc > 4 ? atoi(argv[4]) : 5;
    uint64_t cache = (argc > 5 ? strtoull(argv[5], NULL, 10) : 1024) << 20;
    if (!v) {
        fprintf(stderr, "signature like KQRvKR\n");
        return 2;
    }
    tbs_tablebase *tb = tbs_init(argv[1], cache);
    if (!tb) {
        fprintf(stderr, "tbs_init: %s\n", tbs_last_error_message());
        return 2;
    }
    board *boards = malloc(n * sizeof *boards);
    size_t legal = 0, failed = 0;
    double t0 = now();
    for (size_t i = 0; i < n; i++) {
        board b;
        memset(&b, 0, sizeof b);
        place(&b, sig, (size_t)(v - sig), 1);
        place(&b, v + 1, strlen(v + 1), 0);
        b.turn = (unsigned)(next() & 1);
        if (probe(tb, &b) != TBS_RESULT_FAILED) boards[legal++] = b;
        else if (tbs_last_error() != TBS_ERROR_BAD_POSITION) failed++;
    }
    double warm = now() - t0;
    if (failed) {
        fprintf(stderr, "%zu probes failed: %s\n", failed, tbs_last_error_message());
        return 1;
    }
    unsigned long counts[5] = {0};
    t0 = now();
    double c0 = cpu();
    for (int r = 0; r < rounds; r++)
        for (size_t i = 0; i < legal; i++) counts[probe(tb, &boards[i])]++;
    double t = now() - t0, c = cpu() - c0;
    double probes = (double)legal * rounds;
    printf("%s: %zu legal of %zu placements (warm-up %.2f s, cache %.0f MiB held)\n", sig, legal, n, warm,
           (double)tbs_cached_bytes(tb) / (1 << 20));
    printf("loss %lu, blessed loss %lu, draw %lu, cursed win %lu, win %lu\n", counts[0], counts[1], counts[2],
           counts[3], counts[4]);
    printf("%.0f WDL probes in %.3f s: %.2f M probes/s on one thread (%.3f s of CPU: %.2f M probes per CPU second)\n",
           probes, t, probes / t / 1e6, c, probes / c / 1e6);
    free(boards);
    tbs_free(tb);
    return 0;
}
