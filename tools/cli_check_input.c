/* SPDX-License-Identifier: MIT */
/* Input of `perftramp check`: regular files and standard input (a file or
 * a pipe), read record by record as far as perf would read them, never the
 * whole file into memory.  A named FIFO is refused like a device: opened,
 * it blocks until a writer comes (issue 25); `cat FIFO | perftramp check -`
 * says what to wait for. */
#include "cli_check.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK ((size_t)1 << 20)
#define LIST_HOLD ((size_t)8 << 20) /* --records: bytes of one record decoded */

static const char *type_name(mode_t m)
{
    if (S_ISREG(m)) return "file";
    if (S_ISFIFO(m)) return "FIFO";
    if (S_ISCHR(m)) return "character device";
    if (S_ISBLK(m)) return "block device";
    if (S_ISDIR(m)) return "directory";
    if (S_ISSOCK(m)) return "socket";
    return "special file";
}

int cli_input_open(struct cli_input *in, const char *path, char *why, size_t why_len)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    in->fd = -1;
    in->size = UINT64_MAX;
    struct stat st;
    if (strcmp(path, "-") == 0) {
        in->fd = STDIN_FILENO;
        if (fstat(in->fd, &st) < 0) {
            snprintf(why, why_len, "standard input: %s", strerror(errno));
            return -1;
        }
        in->kind = S_ISREG(st.st_mode) ? "standard input (a file)" : "standard input";
    } else {
        if (stat(path, &st) < 0) {
            snprintf(why, why_len, "%s", strerror(errno));
            return -1;
        }
        if (!S_ISREG(st.st_mode))
            goto refused;
        /* O_NONBLOCK: if the name became a FIFO since stat(), open() must
         * not wait for its writer; fstat() below refuses it */
        in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (in->fd < 0) {
            snprintf(why, why_len, "%s", strerror(errno));
            return -1;
        }
        if (fstat(in->fd, &st) < 0) {
            snprintf(why, why_len, "%s", strerror(errno));
            close(in->fd);
            in->fd = -1;
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            close(in->fd);
            in->fd = -1;
            goto refused;
        }
        in->kind = type_name(st.st_mode);
    }
    in->regular = S_ISREG(st.st_mode);
    if (in->regular) {
        in->size = (uint64_t)st.st_size;
        /* reads of a regular file never block: back to blocking mode */
        int fl = fcntl(in->fd, F_GETFL);
        if (fl >= 0)
            fcntl(in->fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    return 0;

refused:
    snprintf(why, why_len,
             "a %s, not a regular file: refused (a jitdump is a file; to check a stream, pipe it to "
             "`perftramp check -`)",
             type_name(st.st_mode));
    errno = EINVAL;
    return -1;
}

void cli_input_close(struct cli_input *in)
{
    if (in->fd > STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* read() that waits at most timeout_s for a non-regular input.  Returns
 * bytes read, 0 at end of input, -1 with errno (ETIMEDOUT). */
static ssize_t read_some(struct cli_input *in, uint8_t *buf, size_t n, double timeout_s)
{
    double deadline = now_s() + timeout_s;
    for (;;) {
        if (!in->regular) {
            /* wait for data first: standard input may be a blocking pipe */
            double left = deadline - now_s();
            if (left <= 0) {
                errno = ETIMEDOUT;
                return -1;
            }
            struct pollfd p = {.fd = in->fd, .events = POLLIN};
            int k = poll(&p, 1, (int)(left * 1000) + 1);
            if (k < 0 && errno != EINTR)
                return -1;
            if (k <= 0)
                continue;
        }
        ssize_t r = read(in->fd, buf, n);
        if (r >= 0)
            return r;
        if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
    }
}

/* Standard input that is not a file (a pipe): wait for data first, up to
 * the timeout. */
static int wait_for_writer(struct cli_input *in, double timeout_s)
{
    if (in->regular)
        return 0;
    struct pollfd p = {.fd = in->fd, .events = POLLIN};
    int ms = (int)(timeout_s * 1000);
    for (;;) {
        int k = poll(&p, 1, ms);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        return 0;
    }
}

static void io_why(struct cli_input *in, double timeout_s, char *why, size_t why_len)
{
    if (errno == ETIMEDOUT)
        snprintf(why, why_len, "%s: no data for %.0f s (no writer?); --timeout SECONDS waits longer", in->kind,
                 timeout_s);
    else
        snprintf(why, why_len, "%s", strerror(errno));
}

int cli_input_feed(struct cli_input *in, struct pt_jd_validator *v, double timeout_s, char *why, size_t why_len)
{
    uint8_t *buf = malloc(CHUNK);
    if (!buf) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    int rc = 0;
    if (wait_for_writer(in, timeout_s) < 0) {
        io_why(in, timeout_s, why, why_len);
        free(buf);
        return -1;
    }
    uint64_t pos = 0;
    for (;;) {
        uint64_t skip = pt_jd_validator_discardable(v);
        if (skip && in->regular) {
            /* a record body too big to hold: seek over it */
            if (lseek(in->fd, (off_t)skip, SEEK_CUR) < 0) {
                snprintf(why, why_len, "%s", strerror(errno));
                rc = -1;
                break;
            }
            uint64_t left = in->size > pos ? in->size - pos : 0;
            uint64_t k = skip < left ? skip : left;
            pt_jd_validator_skip(v, k);
            pos += k;
            if (k < skip)
                break; /* the file ends inside it */
            continue;
        }
        ssize_t r = read_some(in, buf, CHUNK, timeout_s);
        if (r < 0) {
            io_why(in, timeout_s, why, why_len);
            rc = -1;
            break;
        }
        if (r == 0)
            break;
        pos += (uint64_t)r;
        int k = pt_jd_validator_feed(v, buf, (size_t)r);
        if (k < 0) {
            snprintf(why, why_len, "out of memory");
            rc = -1;
            break;
        }
        if (k > 0)
            break; /* perf reads no further */
    }
    free(buf);
    return rc;
}

/* ---- --records ---------------------------------------------------------- */

static int read_full(struct cli_input *in, uint8_t *p, size_t n, double timeout_s, size_t *got)
{
    *got = 0;
    while (*got < n) {
        ssize_t r = read_some(in, p + *got, n - *got, timeout_s);
        if (r < 0)
            return -1;
        if (r == 0)
            return 0;
        *got += (size_t)r;
    }
    return 0;
}

static int discard(struct cli_input *in, uint64_t n, double timeout_s, uint64_t *done)
{
    *done = 0;
    if (in->regular) {
        if (lseek(in->fd, (off_t)n, SEEK_CUR) < 0)
            return -1;
        *done = n;
        return 0;
    }
    uint8_t tmp[65536];
    while (*done < n) {
        size_t want = n - *done < sizeof tmp ? (size_t)(n - *done) : sizeof tmp;
        ssize_t r = read_some(in, tmp, want, timeout_s);
        if (r <= 0)
            return (int)r;
        *done += (uint64_t)r;
    }
    return 0;
}

static void print_name(FILE *out, const char *name, size_t n)
{
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

int cli_input_list_records(struct cli_input *in, FILE *out, double timeout_s, char *why, size_t why_len)
{
    uint8_t hdr[PT_JD_HEADER_SIZE];
    size_t got;
    if (wait_for_writer(in, timeout_s) < 0 || read_full(in, hdr, sizeof hdr, timeout_s, &got) < 0) {
        io_why(in, timeout_s, why, why_len);
        return -1;
    }
    struct pt_jd_header h;
    if (got < sizeof hdr || pt_jd_header_decode(hdr, &h) < 0) {
        fprintf(out, "  (no records: not a jitdump header)\n");
        return 0;
    }
    uint8_t *buf = malloc(LIST_HOLD);
    if (!buf) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    uint64_t off = PT_JD_HEADER_SIZE;
    int rc = 0;
    for (;;) {
        if (read_full(in, buf, PT_JD_PREFIX_SIZE, timeout_s, &got) < 0) {
            io_why(in, timeout_s, why, why_len);
            rc = -1;
            break;
        }
        if (got == 0)
            break;
        struct pt_jd_record r;
        pt_jd_record_decode(&h, buf, got, (size_t)off, &r);
        if (got < PT_JD_PREFIX_SIZE) {
            fprintf(out, "  record 0x%08" PRIx64 " cannot be framed: %zu trailing bytes\n", off, got);
            break;
        }
        uint32_t total = (uint32_t)(buf[4] | buf[5] << 8 | buf[6] << 16 | (uint32_t)buf[7] << 24);
        if (h.swapped)
            total = __builtin_bswap32(total);
        if (total < PT_JD_PREFIX_SIZE) {
            fprintf(out, "  record 0x%08" PRIx64 " cannot be framed: total_size %" PRIu32 " < 16\n", off, total);
            break;
        }
        size_t hold = total <= LIST_HOLD ? total : PT_JD_PREFIX_SIZE;
        size_t body = 0;
        if (read_full(in, buf + PT_JD_PREFIX_SIZE, hold - PT_JD_PREFIX_SIZE, timeout_s, &body) < 0) {
            io_why(in, timeout_s, why, why_len);
            rc = -1;
            break;
        }
        if (body < hold - PT_JD_PREFIX_SIZE) {
            fprintf(out, "  record 0x%08" PRIx64 " cannot be framed: torn %s of %" PRIu32 " bytes\n", off,
                    pt_jd_record_name(r.id), total);
            break;
        }
        if (hold < total) {
            uint64_t done;
            if (discard(in, total - hold, timeout_s, &done) < 0 || done < total - hold) {
                fprintf(out, "  record 0x%08" PRIx64 " cannot be framed: torn %s of %" PRIu32 " bytes\n", off,
                        pt_jd_record_name(r.id), total);
                break;
            }
        }
        pt_jd_record_decode(&h, buf, hold, (size_t)off, &r);
        fprintf(out, "  record 0x%08" PRIx64 " %-14s size %-6" PRIu32 " ts %" PRIu64, off, pt_jd_record_name(r.id),
                total, r.timestamp);
        if (hold < total)
            fputs(" (body not read)", out);
        else if (r.malformed && r.id < PT_JD_ID_COUNT && r.id != PT_JD_CLOSE)
            fputs(" (malformed)", out);
        else if (r.id == PT_JD_LOAD) {
            fprintf(out, " code_index %" PRIu64 " code_addr 0x%" PRIx64 " code_size %" PRIu64 " name ", r.code_index,
                    r.code_addr, r.code_size);
            print_name(out, r.name, r.name_len);
        } else if (r.id == PT_JD_UNWINDING_INFO) {
            fprintf(out, " unwinding_size %" PRIu64 " eh_frame_hdr_size %" PRIu64 " mapped_size %" PRIu64,
                    r.unwinding_size, r.eh_frame_hdr_size, r.mapped_size);
        }
        fputc('\n', out);
        off += total;
    }
    free(buf);
    return rc;
}
