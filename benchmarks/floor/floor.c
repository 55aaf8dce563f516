/*
 * floor: what one core of plain C takes for filterkit's benchmark jobs (issue 20, item 1).
 *
 *     gcc -O2 -o floor benchmarks/floor/floor.c -lm
 *     floor identity|l2|shape [-c first|last|N] IN.arff > OUT.arff
 *
 * The input is read with mmap, rows are parsed into (index, double) entries, the job is
 * done, and each number is written in Python's shortest round-trip form through one
 * reused 1 MiB output buffer.  It reads the subset of ARFF the benchmark uses (sparse
 * rows "{i v,i v,...}", numeric attributes and a nominal class, no weights, quotes or
 * missing values) and refuses anything else with exit status 2; the header is copied
 * as it is.  From the @data line on, `identity` and `l2` write exactly filterkit's bytes
 * (`filterkit [-c first] IN` and `filterkit -c first IN l2`: the same sequential sum of
 * squares, square root and division).  `shape` is a two-pass job shaped like
 * `filterkit shape bns l2`: pass 1 counts, per feature, the rows and positives at each
 * count value (capped at 31) and per class; pass 2 maps each value to the Laplace
 * estimate (pos+1)/(n+2) at its count minus the one at 0, times the feature's
 * bi-normal separation, then normalizes the row to unit length.  It does the same
 * amount of work as filterkit's chain, not the same arithmetic (no neighbour windows).
 *
 * Numbers: an integral value below 2^53 is written as an integer; any other finite
 * value as the shortest decimal that reads back to the same double, the closest one
 * when several are as short, laid out as Python's repr ("0.1", "1e-05", "1.5e+16").
 * The digits come from one long double product m * 10^(16-k) (powers of ten from
 * strtold, correctly rounded), which locates the value and both ends of its rounding
 * interval to within 0.012 units of the 17th digit.  When the nearest candidate is a
 * near tie, snprintf's exact rounding picks it; when an interval end is within 0.03
 * units of a candidate (and for exact powers of two, whose interval is lopsided), a
 * trial with snprintf and strtod decides: correct always, fast nearly always.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum job { IDENTITY, L2, SHAPE };

#define OUT_SIZE (1 << 20)
#define MAX_COUNT 31
#define MARGIN 0.03L

static char out[OUT_SIZE + 512];
static size_t out_used;

static void flush_out(void) {
    size_t done = 0;
    while (done < out_used) {
        ssize_t wrote = write(STDOUT_FILENO, out + done, out_used - done);
        if (wrote < 0) {
            if (errno == EINTR)
                continue;
            perror("floor: write");
            exit(1);
        }
        done += (size_t)wrote;
    }
    out_used = 0;
}

static void put(const char *text, size_t length) {
    if (out_used + length > OUT_SIZE)
        flush_out();
    if (length > OUT_SIZE) {
        ssize_t wrote = write(STDOUT_FILENO, text, length);
        if (wrote != (ssize_t)length) {
            perror("floor: write");
            exit(1);
        }
        return;
    }
    memcpy(out + out_used, text, length);
    out_used += length;
}

static void refuse(const char *why, size_t line) {
    fprintf(stderr, "floor: line %zu: %s (the floor reads only the benchmark's kind of ARFF)\n", line, why);
    exit(2);
}

/* ---- shortest round-trip formatting ---------------------------------------------- */

static long double powers_of_ten[700]; /* 10^(n-350), correctly rounded to long double */
static const uint64_t exact_ten[18] = {1ULL,
                                       10ULL,
                                       100ULL,
                                       1000ULL,
                                       10000ULL,
                                       100000ULL,
                                       1000000ULL,
                                       10000000ULL,
                                       100000000ULL,
                                       1000000000ULL,
                                       10000000000ULL,
                                       100000000000ULL,
                                       1000000000000ULL,
                                       10000000000000ULL,
                                       100000000000000ULL,
                                       1000000000000000ULL,
                                       10000000000000000ULL,
                                       100000000000000000ULL};

static void make_powers_of_ten(void) {
    char text[16];
    for (int n = 0; n < 700; n++) {
        snprintf(text, sizeof text, "1e%d", n - 350);
        powers_of_ten[n] = strtold(text, NULL);
    }
}

/* Lay out `digits` (no trailing zeros) times 10^exponent10 of the first digit as repr does. */
static size_t layout(char *at, int negative, const char *digits, int count, int point) {
    /* point: the decimal exponent of the first digit plus one (0.0123: point = -1) */
    char *start = at;
    if (negative)
        *at++ = '-';
    int exponent = point - 1;
    if (exponent < -4 || exponent >= 16) {
        *at++ = digits[0];
        if (count > 1) {
            *at++ = '.';
            memcpy(at, digits + 1, (size_t)(count - 1));
            at += count - 1;
        }
        at += sprintf(at, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
    } else if (point <= 0) {
        *at++ = '0';
        *at++ = '.';
        for (int i = 0; i < -point; i++)
            *at++ = '0';
        memcpy(at, digits, (size_t)count);
        at += count;
    } else if (point >= count) {
        memcpy(at, digits, (size_t)count);
        at += count;
        for (int i = count; i < point; i++)
            *at++ = '0';
        *at++ = '.';
        *at++ = '0';
    } else {
        memcpy(at, digits, (size_t)point);
        at += point;
        *at++ = '.';
        memcpy(at, digits + point, (size_t)(count - point));
        at += count - point;
    }
    return (size_t)(at - start);
}

/* The decimal digits of `number` at `at`; their count. */
static int write_digits(char *at, uint64_t number) {
    char reversed[24];
    int count = 0;
    do {
        reversed[count++] = (char)('0' + number % 10);
        number /= 10;
    } while (number);
    for (int i = 0; i < count; i++)
        at[i] = reversed[count - 1 - i];
    return count;
}

/* Write `number` times 10^scale, trailing zeros dropped, as repr does. */
static size_t layout_number(char *at, int negative, uint64_t number, int scale) {
    char digits[24];
    int count = write_digits(digits, number), point = scale + count;
    while (count > 1 && digits[count - 1] == '0')
        count--;
    return layout(at, negative, digits, count, point);
}

/* The correctly rounded `precision` significant digits of |value| (snprintf is exact),
   as a number and its power of ten. */
static uint64_t rounded_digits(double value, int precision, int *scale) {
    char text[40];
    snprintf(text, sizeof text, "%.*e", precision - 1, fabs(value));
    char *e = strchr(text, 'e');
    *scale = atoi(e + 1) - (precision - 1);
    uint64_t number = 0;
    for (char *c = text; c < e; c++)
        if (*c >= '0' && *c <= '9')
            number = number * 10 + (uint64_t)(*c - '0');
    return number;
}

/* The exact answer by trial: for each length, the correctly rounded digits (the closest
   of that length, so repr's choice when they read back), or else a neighbour of them
   that reads back (only a power of two, whose interval is lopsided, has one). */
static size_t shortest_slowly(char *at, double value) {
    for (int precision = 1; precision <= 17; precision++) {
        int scale;
        uint64_t middle = rounded_digits(value, precision, &scale);
        const uint64_t candidates[3] = {middle, middle - 1, middle + 1};
        for (int i = 0; i < 3; i++) {
            char candidate[40];
            snprintf(candidate, sizeof candidate, "%llue%d", (unsigned long long)candidates[i], scale);
            if (strtod(candidate, NULL) == fabs(value))
                return layout_number(at, signbit(value), candidates[i], scale);
        }
    }
    return (size_t)sprintf(at, "%.17g", value);
}

static size_t format_number(char *at, double value) {
    if (value != value)
        return (size_t)sprintf(at, "?");
    if (isinf(value))
        return (size_t)sprintf(at, value > 0 ? "Infinity" : "-Infinity");
    if (fabs(value) < 9007199254740992.0 && value == (double)(int64_t)value) {
        if (value == 0 && signbit(value))
            return (size_t)sprintf(at, "-0");
        int64_t whole = (int64_t)value;
        if (whole < 0) {
            *at = '-';
            return 1 + (size_t)write_digits(at + 1, (uint64_t)(-whole));
        }
        return (size_t)write_digits(at, (uint64_t)whole);
    }
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint64_t fraction = bits & ((1ULL << 52) - 1);
    int biased = (int)((bits >> 52) & 0x7ff);
    if (fraction == 0 && biased > 1)
        return shortest_slowly(at, value); /* a power of two: the interval is lopsided */
    uint64_t mantissa = biased ? fraction | (1ULL << 52) : fraction;
    double magnitude = fabs(value);
    int binary_exponent;
    frexp(magnitude, &binary_exponent);
    /* the first digit's decimal exponent, or one less */
    int k = (int)floor((binary_exponent - 1) * 0.30102999566398120);
    long double scaled = (long double)magnitude * powers_of_ten[16 - k + 350];
    if (scaled >= 1e17L) {
        k++;
        scaled = (long double)magnitude * powers_of_ten[16 - k + 350];
    } else if (scaled < 1e16L) {
        k--;
        scaled = (long double)magnitude * powers_of_ten[16 - k + 350];
    }
    /* In units of the 17th digit: half an ulp, the nearest whole unit and the offset from it. */
    long double half_gap = scaled / (2.0L * (long double)mantissa);
    uint64_t whole = (uint64_t)(scaled + 0.5L), answer = whole; /* exact: scaled < 2^57 */
    long double offset = scaled - (long double)whole;
    int dropped = 0, near_tie = 0.5L - fabsl(offset) < MARGIN;
    /* Drop one more digit while the nearest multiple of 10^t is inside the interval. */
    for (int t = 1; t <= 17; t++) {
        uint64_t step = exact_ten[t], remainder = whole % step;
        long double below = (long double)remainder + offset, above = (long double)step - below;
        long double distance = below < above ? below : above;
        if (distance < half_gap - MARGIN) {
            answer = below < above ? whole - remainder : whole - remainder + step;
            dropped = t;
            near_tie = fabsl(below - above) < MARGIN;
        } else if (distance <= half_gap + MARGIN) {
            return shortest_slowly(at, value);
        } else {
            break;
        }
    }
    int scale = k - 16 + dropped;
    answer /= exact_ten[dropped];
    if (near_tie) /* two multiples nearly as close: snprintf rounds exactly */
        answer = rounded_digits(value, 17 - dropped, &scale);
    return layout_number(at, signbit(value), answer, scale);
}

/* ---- the inverse normal CDF, for bi-normal separation ------------------------------ */

static double inverse_normal(double p) {
    /* Acklam's rational approximation, refined by one Halley step on erfc. */
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01,  -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    double x;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p > 1 - 0.02425) {
        double q = sqrt(-2 * log(1 - p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    double e = 0.5 * erfc(-x / sqrt(2)) - p;
    double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

/* ---- the input ----------------------------------------------------------------------- */

struct input {
    const char *text, *end;
    const char *data; /* the first byte after the @data line */
    size_t data_line;
    int n_attributes;
    unsigned char *nominal; /* per attribute */
    char **first_label;     /* per nominal attribute: its first label (the sparse 0) */
};

static const char *line_end(const char *at, const char *end) {
    const char *newline = memchr(at, '\n', (size_t)(end - at));
    return newline ? newline : end;
}

static int starts_with_word(const char *at, const char *end, const char *word) {
    size_t length = strlen(word);
    return (size_t)(end - at) >= length && strncasecmp(at, word, length) == 0;
}

static void read_header(struct input *in) {
    const char *at = in->text;
    size_t line = 0, capacity = 1024;
    in->nominal = malloc(capacity);
    in->first_label = malloc(capacity * sizeof(char *));
    while (at < in->end) {
        const char *stop = line_end(at, in->end);
        line++;
        const char *word = at;
        while (word < stop && (*word == ' ' || *word == '\t'))
            word++;
        if (starts_with_word(word, stop, "@data")) {
            in->data = stop < in->end ? stop + 1 : stop;
            in->data_line = line;
            put(in->text, (size_t)(in->data - in->text));
            return;
        }
        if (starts_with_word(word, stop, "@attribute")) {
            const char *name = word + 10;
            while (name < stop && (*name == ' ' || *name == '\t'))
                name++;
            const char *type = name;
            if (*type == '\'' || *type == '"') {
                char quote = *type++;
                while (type < stop && *type != quote)
                    type += *type == '\\' ? 2 : 1;
                type++;
            } else {
                while (type < stop && *type != ' ' && *type != '\t')
                    type++;
            }
            while (type < stop && (*type == ' ' || *type == '\t'))
                type++;
            if ((size_t)in->n_attributes == capacity) {
                capacity *= 2;
                in->nominal = realloc(in->nominal, capacity);
                in->first_label = realloc(in->first_label, capacity * sizeof(char *));
            }
            int nominal = type < stop && *type == '{';
            in->nominal[in->n_attributes] = (unsigned char)nominal;
            in->first_label[in->n_attributes] = NULL;
            if (nominal) {
                const char *label = type + 1, *label_end = label;
                while (label_end < stop && *label_end != ',' && *label_end != '}')
                    label_end++;
                in->first_label[in->n_attributes] = strndup(label, (size_t)(label_end - label));
            } else if (!starts_with_word(type, stop, "numeric") && !starts_with_word(type, stop, "real") &&
                       !starts_with_word(type, stop, "integer")) {
                refuse("an attribute that is neither numeric nor nominal", line);
            }
            in->n_attributes++;
        }
        at = stop + 1;
    }
    refuse("no @data line", line);
}

struct entry {
    int index;
    double value;         /* numeric attributes */
    const char *token;    /* nominal attributes: the label as written */
    int token_length;
};

/* Parse one sparse row at `at`; returns the number of entries and moves `at` past the line. */
static int parse_row(const struct input *in, const char **at, size_t line, struct entry **entries, int *capacity) {
    const char *p = *at, *stop = line_end(p, in->end);
    *at = stop < in->end ? stop + 1 : stop;
    while (p < stop && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    if (p == stop || *p == '%')
        return -1;
    if (*p != '{')
        refuse("a dense row", line);
    p++;
    int count = 0;
    while (p < stop && *p != '}') {
        if (count == *capacity) {
            *capacity *= 2;
            *entries = realloc(*entries, (size_t)*capacity * sizeof **entries);
        }
        struct entry *e = &(*entries)[count];
        int index = 0;
        if (*p < '0' || *p > '9')
            refuse("a bad sparse index", line);
        while (*p >= '0' && *p <= '9')
            index = index * 10 + (*p++ - '0');
        if (index >= in->n_attributes || *p != ' ')
            refuse("a bad sparse entry", line);
        p++;
        const char *token = p;
        while (p < stop && *p != ',' && *p != '}')
            p++;
        e->index = index;
        e->token = token;
        e->token_length = (int)(p - token);
        if (in->nominal[index]) {
            if (*token == '\'' || *token == '"' || *token == '?')
                refuse("a quoted or missing label", line);
        } else {
            const char *digit = token;
            uint64_t whole = 0;
            while (digit < p && *digit >= '0' && *digit <= '9' && digit - token < 18)
                whole = whole * 10 + (uint64_t)(*digit++ - '0');
            if (digit == p && digit > token) {
                e->value = (double)whole;
            } else {
                char *parsed;
                e->value = strtod(token, &parsed);
                if (parsed != p || !isfinite(e->value))
                    refuse("a number the floor does not read", line);
            }
        }
        count++;
        if (*p == ',')
            p++;
    }
    if (p == stop)
        refuse("an unterminated sparse row", line);
    return count;
}

static void write_row(const struct input *in, const struct entry *entries, int count, const double *values) {
    if (out_used + 2 > OUT_SIZE)
        flush_out();
    out[out_used++] = '{';
    int written = 0;
    for (int i = 0; i < count; i++) {
        const struct entry *e = &entries[i];
        if (!in->nominal[e->index] && values[i] == 0)
            continue; /* a zero is not stored in a sparse row */
        if (out_used + 600 > OUT_SIZE)
            flush_out();
        if (written++)
            out[out_used++] = ',';
        char *at = out + out_used;
        at += write_digits(at, (uint64_t)e->index);
        *at++ = ' ';
        if (in->nominal[e->index]) {
            if (e->token_length > 500)
                refuse("a label longer than the floor's buffer", 0);
            memcpy(at, e->token, (size_t)e->token_length);
            at += e->token_length;
        } else {
            at += format_number(at, values[i]);
        }
        out_used = (size_t)(at - out);
    }
    if (out_used + 2 > OUT_SIZE)
        flush_out();
    out[out_used++] = '}';
    out[out_used++] = '\n';
}

/* Divide the row's numeric features by their Euclidean length: the squares summed in
   entry order, as filterkit does; a row whose squares overflow or fall below 2^-968 is
   first scaled by a power of two near its largest value (exact), as filterkit does. */
static void normalize(const struct input *in, const struct entry *entries, int count, double *values, int class_index) {
    double sum = 0, largest = 0;
    for (int i = 0; i < count; i++)
        if (!in->nominal[entries[i].index] && entries[i].index != class_index) {
            sum += values[i] * values[i];
            largest = fmax(largest, fabs(values[i]));
        }
    double norm = sqrt(sum);
    if (largest > 0 && (!isfinite(norm) || largest * largest < 0x1p-968)) {
        int exponent;
        frexp(largest, &exponent);
        sum = 0;
        for (int i = 0; i < count; i++)
            if (!in->nominal[entries[i].index] && entries[i].index != class_index) {
                values[i] = ldexp(values[i], -exponent);
                sum += values[i] * values[i];
            }
        norm = sqrt(sum);
    }
    if (norm > 0)
        for (int i = 0; i < count; i++)
            if (!in->nominal[entries[i].index] && entries[i].index != class_index)
                values[i] = values[i] / norm;
}

/* The class label of a row: its class entry's token, or the first label when absent. */
static int is_positive(const struct input *in, const struct entry *entries, int count, int class_index,
                       const char *positive) {
    for (int i = 0; i < count; i++)
        if (entries[i].index == class_index)
            return (size_t)entries[i].token_length == strlen(positive) &&
                   strncmp(entries[i].token, positive, (size_t)entries[i].token_length) == 0;
    return strcmp(in->first_label[class_index], positive) == 0;
}

int main(int argc, char **argv) {
    enum job job;
    const char *class_option = "last", *path = NULL;
    if (argc < 3)
        goto usage;
    if (strcmp(argv[1], "identity") == 0)
        job = IDENTITY;
    else if (strcmp(argv[1], "l2") == 0)
        job = L2;
    else if (strcmp(argv[1], "shape") == 0)
        job = SHAPE;
    else
        goto usage;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
            class_option = argv[++i];
        else if (!path)
            path = argv[i];
        else
            goto usage;
    }
    if (!path)
        goto usage;
    int descriptor = open(path, O_RDONLY);
    struct stat status;
    if (descriptor < 0 || fstat(descriptor, &status) < 0) {
        perror(path);
        return 1;
    }
    struct input in = {0};
    in.text = status.st_size ? mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, descriptor, 0) : "";
    if (in.text == MAP_FAILED) {
        perror(path);
        return 1;
    }
    madvise((void *)in.text, (size_t)status.st_size, MADV_SEQUENTIAL);
    in.end = in.text + status.st_size;
    make_powers_of_ten();
    read_header(&in);
    int class_index = strcmp(class_option, "first") == 0  ? 0
                      : strcmp(class_option, "last") == 0 ? in.n_attributes - 1
                                                          : atoi(class_option) - 1;
    if (class_index < 0 || class_index >= in.n_attributes)
        refuse("no such class attribute", 0);
    int capacity = 1024;
    struct entry *entries = malloc((size_t)capacity * sizeof *entries);
    double *values = malloc((size_t)capacity * sizeof *values);
    int values_capacity = capacity;
    double *shaped = NULL;
    if (job == SHAPE) {
        if (!in.nominal[class_index])
            refuse("shape needs a nominal class", 0);
        /* pass 1: per feature and count value, the rows and positives */
        const char *positive = "1";
        size_t cells = (size_t)in.n_attributes * (MAX_COUNT + 1);
        double *rows_at = calloc(cells, sizeof *rows_at), *positives_at = calloc(cells, sizeof *positives_at);
        double total = 0, total_positive = 0;
        const char *at = in.data;
        size_t line = in.data_line;
        while (at < in.end) {
            int count = parse_row(&in, &at, ++line, &entries, &capacity);
            if (count < 0)
                continue;
            int positive_row = is_positive(&in, entries, count, class_index, positive);
            total++;
            total_positive += positive_row;
            for (int i = 0; i < count; i++) {
                if (in.nominal[entries[i].index])
                    continue;
                double v = entries[i].value;
                int bin = v >= MAX_COUNT ? MAX_COUNT : v <= 0 ? 0 : (int)v;
                size_t cell = (size_t)entries[i].index * (MAX_COUNT + 1) + (size_t)bin;
                rows_at[cell]++;
                positives_at[cell] += positive_row;
            }
        }
        /* the map: per feature and count, (Laplace estimate - the one at 0) * BNS */
        shaped = malloc(cells * sizeof *shaped);
        double negatives = total - total_positive;
        for (int f = 0; f < in.n_attributes; f++) {
            double *row = rows_at + (size_t)f * (MAX_COUNT + 1), *pos = positives_at + (size_t)f * (MAX_COUNT + 1);
            double present = 0, present_positive = 0;
            for (int v = 1; v <= MAX_COUNT; v++) {
                present += row[v];
                present_positive += pos[v];
            }
            double tpr = total_positive > 0 ? present_positive / total_positive : 0;
            double fpr = negatives > 0 ? (present - present_positive) / negatives : 0;
            tpr = fmin(fmax(tpr, 0.0005), 0.9995);
            fpr = fmin(fmax(fpr, 0.0005), 0.9995);
            double bns = fabs(inverse_normal(tpr) - inverse_normal(fpr));
            double zero_rows = total - present, zero_positive = total_positive - present_positive;
            double at_zero = (zero_positive + 1) / (zero_rows + 2);
            for (int v = 0; v <= MAX_COUNT; v++)
                shaped[(size_t)f * (MAX_COUNT + 1) + (size_t)v] =
                    v == 0 ? 0 : ((pos[v] + 1) / (row[v] + 2) - at_zero) * bns;
        }
        free(rows_at);
        free(positives_at);
    }
    const char *at = in.data;
    size_t line = in.data_line;
    while (at < in.end) {
        int count = parse_row(&in, &at, ++line, &entries, &capacity);
        if (count < 0)
            continue;
        if (count > values_capacity) {
            values_capacity = capacity;
            values = realloc(values, (size_t)values_capacity * sizeof *values);
        }
        for (int i = 0; i < count; i++)
            values[i] = entries[i].value;
        if (job == SHAPE) {
            for (int i = 0; i < count; i++) {
                if (in.nominal[entries[i].index])
                    continue;
                double v = values[i];
                int bin = v >= MAX_COUNT ? MAX_COUNT : v <= 0 ? 0 : (int)v;
                values[i] = shaped[(size_t)entries[i].index * (MAX_COUNT + 1) + (size_t)bin];
            }
        }
        if (job != IDENTITY)
            normalize(&in, entries, count, values, class_index);
        write_row(&in, entries, count, values);
    }
    flush_out();
    return 0;
usage:
    fprintf(stderr, "usage: floor identity|l2|shape [-c first|last|N] IN.arff > OUT.arff\n");
    return 2;
}
