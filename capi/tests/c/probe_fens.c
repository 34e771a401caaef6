/*
 * probe_fens: probes FENs through libtbstream_c, as an engine would, and prints one line per
 * FEN (tests/c_library.rs compiles it and compares its lines with the Rust Tablebase's):
 *
 *   FEN <TAB> fen: CATEGORY WDL DTZ MOVE <TAB> bits: RESULT DTZ <TAB> root: COUNT BEST MOVES...
 *
 * "fen:" is tbs_probe_fen; "bits:" and "root:" parse the FEN here into bitboards and call
 * tbs_probe_wdl, tbs_probe_dtz and tbs_probe_root. A move is UCI/RESULT/DTZ; a failure is
 * "failed:KIND". MOVE is "-" when there is none.
 *
 * Usage: probe_fens TABLES [THREADS] < fens
 *   With THREADS > 1 it prints nothing per FEN: it answers every FEN on one thread, then on
 *   THREADS threads at once through the same handle (each starting at a different FEN),
 *   and prints "agree N" or the first disagreement (exit status 1).
 */
#include "tbstream.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 4096

static const char *result_name(tbs_result r) {
    switch (r) {
    case TBS_RESULT_LOSS: return "loss";
    case TBS_RESULT_BLESSED_LOSS: return "blessed-loss";
    case TBS_RESULT_DRAW: return "draw";
    case TBS_RESULT_CURSED_WIN: return "cursed-win";
    case TBS_RESULT_WIN: return "win";
    default: return "?";
    }
}

static const char *error_name(tbs_error e) {
    switch (e) {
    case TBS_ERROR_NONE: return "none";
    case TBS_ERROR_INVALID_ARGUMENT: return "invalid-argument";
    case TBS_ERROR_BAD_POSITION: return "bad-position";
    case TBS_ERROR_NO_TABLES: return "no-tables";
    case TBS_ERROR_MISSING_TABLE: return "missing-table";
    case TBS_ERROR_DAMAGED_TABLE: return "damaged-table";
    case TBS_ERROR_UNKNOWN_CATEGORY: return "unknown-category";
    case TBS_ERROR_INTERNAL: return "internal";
    default: return "?";
    }
}

/* A position as Fathom's probes take it. */
typedef struct {
    uint64_t white, black, kings, queens, rooks, bishops, knights, pawns;
    unsigned rule50, castling, ep, turn;
} board;

/* Parses a FEN's board, side, castling, en passant and clock fields; 0 on success. Legality
 * is left to the library, which must refuse what it cannot probe. */
static int parse_fen(const char *fen, board *b) {
    memset(b, 0, sizeof *b);
    int sq = 56; /* a8 */
    const char *p = fen;
    for (; *p && *p != ' '; p++) {
        char c = *p;
        if (c == '/') {
            sq -= 16;
            continue;
        }
        if (c >= '1' && c <= '8') {
            sq += c - '0';
            continue;
        }
        if (sq < 0 || sq > 63) return -1;
        uint64_t bit = 1ULL << sq++;
        if (c >= 'A' && c <= 'Z') b->white |= bit; else b->black |= bit;
        switch (c | 0x20) {
        case 'k': b->kings |= bit; break;
        case 'q': b->queens |= bit; break;
        case 'r': b->rooks |= bit; break;
        case 'b': b->bishops |= bit; break;
        case 'n': b->knights |= bit; break;
        case 'p': b->pawns |= bit; break;
        default: return -1;
        }
    }
    char side = 0, castling[8] = "-", ep[8] = "-";
    unsigned clock = 0;
    if (sscanf(p, " %c %7s %7s %u", &side, castling, ep, &clock) < 1) return -1;
    if (side != 'w' && side != 'b') return -1;
    b->turn = side == 'w' ? TBS_WHITE : TBS_BLACK;
    for (const char *c = castling; *c && *c != '-'; c++) {
        const char *rights = "KQkq";
        const char *at = strchr(rights, *c);
        if (!at) return -1;
        b->castling |= 1u << (at - rights);
    }
    if (ep[0] != '-') {
        if (ep[0] < 'a' || ep[0] > 'h' || ep[1] < '1' || ep[1] > '8') return -1;
        b->ep = (unsigned)(ep[0] - 'a') + 8u * (unsigned)(ep[1] - '1');
    }
    b->rule50 = clock;
    return 0;
}

static const char *promotion_letter(uint8_t p) {
    switch (p) {
    case TBS_PROMOTION_QUEEN: return "q";
    case TBS_PROMOTION_ROOK: return "r";
    case TBS_PROMOTION_BISHOP: return "b";
    case TBS_PROMOTION_KNIGHT: return "n";
    default: return "";
    }
}

/* Appends "uci/result/dtz" to out. */
static int put_move(char *out, size_t len, const tbs_move *m) {
    return snprintf(out, len, "%c%c%c%c%s/%s/%d", 'a' + m->from % 8, '1' + m->from / 8, 'a' + m->to % 8,
                    '1' + m->to / 8, promotion_letter(m->promotion), result_name(m->result), m->dtz);
}

/* The answer line of one FEN (without the newline). */
static void answer(const tbs_tablebase *tb, const char *fen, char *out, size_t len) {
    size_t n = (size_t)snprintf(out, len, "%s\tfen: ", fen);
    int32_t wdl = 0, dtz = 0;
    char move[TBS_MOVE_TEXT_LEN];
    tbs_result category = tbs_probe_fen(tb, fen, &wdl, &dtz, move, sizeof move);
    if (category == TBS_RESULT_FAILED)
        n += (size_t)snprintf(out + n, len - n, "failed:%s", error_name(tbs_last_error()));
    else
        n += (size_t)snprintf(out + n, len - n, "%s %d %d %s", result_name(category), wdl, dtz, move[0] ? move : "-");

    board b;
    if (parse_fen(fen, &b) != 0) {
        snprintf(out + n, len - n, "\tbits: unparsed\troot: unparsed");
        return;
    }
#define BITS(b) b.white, b.black, b.kings, b.queens, b.rooks, b.bishops, b.knights, b.pawns, b.rule50, b.castling, b.ep, b.turn
    tbs_result result = tbs_probe_wdl(tb, BITS(b));
    n += (size_t)snprintf(out + n, len - n, "\tbits: %s",
                          result == TBS_RESULT_FAILED ? "failed" : result_name(result));
    if (result == TBS_RESULT_FAILED) n += (size_t)snprintf(out + n, len - n, ":%s", error_name(tbs_last_error()));
    int32_t d = tbs_probe_dtz(tb, BITS(b));
    if (d == TBS_DTZ_FAILED)
        n += (size_t)snprintf(out + n, len - n, " failed:%s", error_name(tbs_last_error()));
    else
        n += (size_t)snprintf(out + n, len - n, " %d", d);

    tbs_move best, moves[TBS_MAX_MOVES];
    int32_t count = tbs_probe_root(tb, BITS(b), &best, moves, TBS_MAX_MOVES);
    if (count < 0) {
        snprintf(out + n, len - n, "\troot: failed:%s", error_name(tbs_last_error()));
        return;
    }
    n += (size_t)snprintf(out + n, len - n, "\troot: %d ", count);
    if (count == 0)
        n += (size_t)snprintf(out + n, len - n, "-/%s/%d", result_name(best.result), best.dtz);
    else
        n += (size_t)put_move(out + n, len - n, &best);
    for (int32_t i = 0; i < count && n < len; i++) {
        n += (size_t)snprintf(out + n, len - n, " ");
        n += (size_t)put_move(out + n, len - n, &moves[i]);
    }
}

typedef struct {
    const tbs_tablebase *tb;
    char **fens;
    size_t n_fens, first;
    char **answers;
} job;

static void *run_job(void *arg) {
    job *j = arg;
    for (size_t k = 0; k < j->n_fens; k++) {
        size_t i = (j->first + k) % j->n_fens;
        j->answers[i] = malloc(LINE);
        answer(j->tb, j->fens[i], j->answers[i], LINE);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s TABLES [THREADS] < fens\n", argv[0]);
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    tbs_tablebase *tb = tbs_init(argv[1], 16u << 20);
    if (!tb) {
        fprintf(stderr, "tbs_init: %s (%s)\n", tbs_last_error_message(), error_name(tbs_last_error()));
        return 2;
    }
    size_t n_fens = 0, cap = 1024;
    char **fens = malloc(cap * sizeof *fens);
    char line[LINE];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        if (n_fens == cap) fens = realloc(fens, (cap *= 2) * sizeof *fens);
        fens[n_fens++] = strdup(line);
    }
    int status = 0;
    if (threads <= 1) {
        char out[LINE];
        for (size_t i = 0; i < n_fens; i++) {
            answer(tb, fens[i], out, sizeof out);
            puts(out);
        }
    } else {
        job one = {tb, fens, n_fens, 0, calloc(n_fens, sizeof(char *))};
        run_job(&one);
        job *jobs = calloc((size_t)threads, sizeof *jobs);
        pthread_t *ids = calloc((size_t)threads, sizeof *ids);
        for (int t = 0; t < threads; t++) {
            jobs[t] = (job){tb, fens, n_fens, n_fens * (size_t)t / (size_t)threads, calloc(n_fens, sizeof(char *))};
            pthread_create(&ids[t], NULL, run_job, &jobs[t]);
        }
        for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
        size_t agree = 0;
        for (int t = 0; t < threads && !status; t++)
            for (size_t i = 0; i < n_fens; i++) {
                if (strcmp(jobs[t].answers[i], one.answers[i]) != 0) {
                    printf("thread %d disagrees:\n%s\n%s\n", t, jobs[t].answers[i], one.answers[i]);
                    status = 1;
                    break;
                }
                agree++;
            }
        if (!status) printf("agree %zu\n", agree);
    }
    printf("largest %u\n", tbs_largest(tb));
    tbs_free(tb);
    return status;
}
