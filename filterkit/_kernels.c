/*
 * Compiled kernels for the statistics pass and the per-value transforms (a build needs a C
 * compiler).
 *
 * Each function does, in one loop and without temporaries, what a few numpy calls would do
 * in the module that uses it, with the same floating-point operations in the same order, so
 * the results are identical bit for bit (tests/test_kernels.py compares them with numpy):
 *
 *   sorted_counts      the distinct keys of an int64 array and how often each occurs
 *                      (filterkit.statistics.SortedSums.of_entries without weights);
 *   stable_order       the stable argsort of an int64 array (the same with weights);
 *   sparse_entries     the stored feature entries of a CSR chunk (statistics._chunk_entries);
 *   value_counts       those entries' distinct (pair, value) counted, for whole-number values
 *                      (statistics.ValueCounts.of_chunk without weights);
 *   presence_counts    those entries' (feature, class) pairs counted, each feature's range
 *                      (statistics.PresenceCounts.add without weights);
 *   merge_counts       two sorted runs of complex keys with counts, merged (statistics._merged_runs),
 *                      and merge_integer_counts the same for int64 keys;
 *   column_ranges      each column's smallest and largest value (statistics.PresenceCounts.add);
 *   shape_stored       the shaper's map of a sparse chunk's stored values (plugins/shaper.py);
 *   normalize_stored   a sparse chunk's rows divided by their L1 or L2 norms (plugins/normalizers.py);
 *   ndtri              the inverse of the standard normal distribution function, scipy.special.ndtri's
 *                      values bit for bit without importing scipy.special (plugins/metrics.py, bns).
 *
 * Arrays come in through the buffer protocol (C-contiguous; int64 'q', int32 'i', float64
 * 'd', bool '?'), outputs as arrays the caller allocated, so this module needs no numpy
 * headers.  The loops run without the GIL.  Built with -ffp-contract=off (setup.py): a
 * fused multiply-add would round differently from numpy's separate operations.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The buffer of ``object`` as a C-contiguous array of ``kind`` ('q' int64, 'i' int32, 'd'
 * float64, '?' bool); ``length`` its element count.  0 with an exception set otherwise. */
static int
get_array(PyObject *object, Py_buffer *view, char kind, int writable, Py_ssize_t *length)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object, view, flags) < 0)
        return 0;
    const char *format = view->format ? view->format : "B";
    if (*format == '<' || *format == '=' || *format == '@')
        format++;
    char found = *format;
    if (found == 'l' && view->itemsize == 8)
        found = 'q';
    if (found == 'l' && view->itemsize == 4)
        found = 'i';
    Py_ssize_t size = kind == 'q' || kind == 'd' ? 8 : kind == 'i' ? 4 : 1;
    if (found != kind || view->itemsize != size || view->ndim > 1) {
        PyErr_Format(PyExc_TypeError, "expected a one-dimensional '%c' array, got '%s'", kind, view->format);
        PyBuffer_Release(view);
        return 0;
    }
    *length = view->len / size;
    return 1;
}

/* The smallest and largest of n int64 keys (n > 0). */
static void
key_range(const int64_t *keys, Py_ssize_t n, int64_t *lowest, int64_t *highest)
{
    int64_t low = keys[0], high = keys[0];
    for (Py_ssize_t i = 1; i < n; i++) {
        if (keys[i] < low)
            low = keys[i];
        if (keys[i] > high)
            high = keys[i];
    }
    *lowest = low;
    *highest = high;
}

#define DIGIT_BITS 11
#define DIGIT_VALUES (1 << DIGIT_BITS)

/* Keys whose span is at most this (relative to their number) are ordered by one tally. */
static int
tally_fits(uint64_t span, Py_ssize_t n)
{
    return span < (uint64_t)4 * (uint64_t)n + 65536 && (uint64_t)n < UINT32_MAX;
}

static int
significant_bits(uint64_t span)
{
    int bits = 0;
    while (span) {
        bits++;
        span >>= 1;
    }
    return bits;
}

/* Keys spanning at most this many values are tallied in one table (1 MiB: it stays in cache). */
#define DIRECT_SPAN ((uint64_t)1 << 18)
/* Wider spans are split by their high bits into buckets of this many values, each tallied in turn. */
#define BUCKET_BITS 16
#define BUCKET_VALUES ((uint64_t)1 << BUCKET_BITS)

/* Emits the keys ``offset + k`` with a non-zero tally[k], k < size, ascending; clears the tally
 * and the bitmap ``used`` (bit k set where tally[k] is, one uint64 per 64 values), whose words
 * are read instead of every slot: a table of 2**16 slots holding a few thousand keys is 1,024
 * words to scan, not 65,536 slots. */
static Py_ssize_t
emit_tally(uint32_t *tally, uint64_t *used, uint64_t size, int64_t offset, int64_t *out_keys, int64_t *out_counts,
           Py_ssize_t m)
{
    uint64_t words = (size + 63) / 64;
    for (uint64_t w = 0; w < words; w++) {
        uint64_t bits = used[w];
        used[w] = 0;
        while (bits) {
            uint64_t k = w * 64 + (uint64_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            out_keys[m] = offset + (int64_t)k;
            out_counts[m] = tally[k];
            tally[k] = 0;
            m++;
        }
    }
    return m;
}

/* tally[k]++ with k's bit set in ``used``. */
static inline void
tally_key(uint32_t *tally, uint64_t *used, uint64_t k)
{
    tally[k]++;
    used[k >> 6] |= (uint64_t)1 << (k & 63);
}

/* Distinct keys ascending with their counts: the number of distinct keys; -1 for a negative
 * key or keys spread too thinly for a tally (numpy's sort then counts them), -2 when out of
 * memory.  A span that fits in cache is tallied directly; a wider one (up to 64 values per
 * key, or 2**24) is split into buckets by its high bits and each bucket tallied in a
 * cache-sized table, whose bitmap's words (one per 64 values) are what the emit reads. */
static Py_ssize_t
count_sorted(const int64_t *keys, Py_ssize_t n, int64_t *out_keys, int64_t *out_counts)
{
    if (n == 0)
        return 0;
    int64_t low, high;
    key_range(keys, n, &low, &high);
    if (low < 0 || (uint64_t)n >= UINT32_MAX)
        return -1;
    uint64_t span = (uint64_t)(high - low) + 1;
    if (span <= DIRECT_SPAN) {
        uint32_t *tally = calloc(span, sizeof(uint32_t));
        uint64_t *used = calloc((span + 63) / 64, sizeof(uint64_t));
        if (!tally || !used) {
            free(tally);
            free(used);
            return -2;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            tally_key(tally, used, (uint64_t)(keys[i] - low));
        Py_ssize_t m = emit_tally(tally, used, span, low, out_keys, out_counts, 0);
        free(tally);
        free(used);
        return m;
    }
    if (span > (uint64_t)64 * (uint64_t)n + ((uint64_t)1 << 24))
        return -1;
    uint64_t n_buckets = ((span - 1) >> BUCKET_BITS) + 1;
    Py_ssize_t *start = calloc(n_buckets + 1, sizeof(Py_ssize_t));
    uint16_t *within = malloc((size_t)n * sizeof(uint16_t));
    uint32_t *tally = calloc(BUCKET_VALUES, sizeof(uint32_t));
    uint64_t *used = calloc(BUCKET_VALUES / 64, sizeof(uint64_t));
    if (!start || !within || !tally || !used) {
        free(start);
        free(within);
        free(tally);
        free(used);
        return -2;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        start[((uint64_t)(keys[i] - low) >> BUCKET_BITS) + 1]++;
    for (uint64_t b = 0; b < n_buckets; b++)
        start[b + 1] += start[b];
    Py_ssize_t *next = malloc((size_t)n_buckets * sizeof(Py_ssize_t));
    if (!next) {
        free(start);
        free(within);
        free(tally);
        free(used);
        return -2;
    }
    memcpy(next, start, (size_t)n_buckets * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t key = (uint64_t)(keys[i] - low);
        within[next[key >> BUCKET_BITS]++] = (uint16_t)(key & (BUCKET_VALUES - 1));
    }
    Py_ssize_t m = 0;
    for (uint64_t b = 0; b < n_buckets; b++) {
        if (start[b] == start[b + 1])
            continue;
        for (Py_ssize_t i = start[b]; i < start[b + 1]; i++)
            tally_key(tally, used, within[i]);
        m = emit_tally(tally, used, BUCKET_VALUES, low + (int64_t)(b << BUCKET_BITS), out_keys, out_counts, m);
    }
    free(next);
    free(start);
    free(within);
    free(tally);
    free(used);
    return m;
}

/* The stable ascending order of n keys into ``order``; 0, -1 for a negative key, -2 when out
 * of memory.  A stable sort's order is unique, so it is numpy's argsort(kind="stable"). */
static int
order_stably(const int64_t *keys, Py_ssize_t n, int64_t *order)
{
    if (n == 0)
        return 0;
    int64_t low, high;
    key_range(keys, n, &low, &high);
    if (low < 0)
        return -1;
    uint64_t span = (uint64_t)(high - low);
    if (tally_fits(span, n)) {
        Py_ssize_t *start = calloc(span + 1, sizeof(Py_ssize_t));
        if (!start)
            return -2;
        for (Py_ssize_t i = 0; i < n; i++)
            start[keys[i] - low]++;
        Py_ssize_t position = 0;
        for (uint64_t k = 0; k <= span; k++) {
            Py_ssize_t count = start[k];
            start[k] = position;
            position += count;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            order[start[keys[i] - low]++] = i;
        free(start);
        return 0;
    }
    int64_t *spare = malloc((size_t)n * sizeof(int64_t));
    if (!spare)
        return -2;
    int64_t *current = order, *next = spare;
    for (Py_ssize_t i = 0; i < n; i++)
        current[i] = i;
    int bits = significant_bits(span);
    for (int shift = 0; shift < bits; shift += DIGIT_BITS) {
        Py_ssize_t start[DIGIT_VALUES] = {0};
        for (Py_ssize_t i = 0; i < n; i++)
            start[((uint64_t)(keys[i] - low) >> shift) & (DIGIT_VALUES - 1)]++;
        Py_ssize_t position = 0;
        for (int d = 0; d < DIGIT_VALUES; d++) {
            Py_ssize_t count = start[d];
            start[d] = position;
            position += count;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t entry = current[i];
            next[start[((uint64_t)(keys[entry] - low) >> shift) & (DIGIT_VALUES - 1)]++] = entry;
        }
        int64_t *swap = current;
        current = next;
        next = swap;
    }
    if (current != order)
        memcpy(order, current, (size_t)n * sizeof(int64_t));
    free(spare);
    return 0;
}

static PyObject *
sort_failure(int code)
{
    if (code == -1)
        Py_RETURN_NONE; /* not for this kernel: the caller's numpy path takes the keys */
    return PyErr_NoMemory();
}

/* sorted_counts(keys, out_keys, out_counts) -> number of distinct keys, or None for a
 * negative key or keys spread too thinly (the caller's numpy path counts those).  The
 * outputs hold at least len(keys) entries. */
static PyObject *
sorted_counts(PyObject *self, PyObject *args)
{
    PyObject *objects[3];
    if (!PyArg_ParseTuple(args, "OOO", &objects[0], &objects[1], &objects[2]))
        return NULL;
    Py_buffer keys, out_keys, out_counts;
    Py_ssize_t n, n_keys, n_counts;
    if (!get_array(objects[0], &keys, 'q', 0, &n))
        return NULL;
    if (!get_array(objects[1], &out_keys, 'q', 1, &n_keys)) {
        PyBuffer_Release(&keys);
        return NULL;
    }
    if (!get_array(objects[2], &out_counts, 'q', 1, &n_counts)) {
        PyBuffer_Release(&keys);
        PyBuffer_Release(&out_keys);
        return NULL;
    }
    PyObject *result;
    if (n_keys < n || n_counts < n) {
        result = PyErr_Format(PyExc_ValueError, "the outputs hold fewer entries than the keys");
    } else {
        Py_ssize_t m;
        Py_BEGIN_ALLOW_THREADS
        m = count_sorted(keys.buf, n, out_keys.buf, out_counts.buf);
        Py_END_ALLOW_THREADS
        result = m >= 0 ? PyLong_FromSsize_t(m) : sort_failure((int)m);
    }
    PyBuffer_Release(&keys);
    PyBuffer_Release(&out_keys);
    PyBuffer_Release(&out_counts);
    return result;
}

/* stable_order(keys, out_order) -> True, or None for a negative key. */
static PyObject *
stable_order(PyObject *self, PyObject *args)
{
    PyObject *keys_object, *order_object;
    if (!PyArg_ParseTuple(args, "OO", &keys_object, &order_object))
        return NULL;
    Py_buffer keys, order;
    Py_ssize_t n, n_order;
    if (!get_array(keys_object, &keys, 'q', 0, &n))
        return NULL;
    if (!get_array(order_object, &order, 'q', 1, &n_order)) {
        PyBuffer_Release(&keys);
        return NULL;
    }
    PyObject *result;
    if (n_order != n) {
        result = PyErr_Format(PyExc_ValueError, "the order holds %zd entries for %zd keys", n_order, n);
    } else {
        int code;
        Py_BEGIN_ALLOW_THREADS
        code = order_stably(keys.buf, n, order.buf);
        Py_END_ALLOW_THREADS
        result = code == 0 ? Py_NewRef(Py_True) : sort_failure(code);
    }
    PyBuffer_Release(&keys);
    PyBuffer_Release(&order);
    return result;
}

/* A CSR matrix's row starts and column indices, either int32 or int64 (scipy picks). */
typedef struct {
    Py_buffer view;
    int wide;
    Py_ssize_t length;
} IndexArray;

static int
get_indices(PyObject *object, IndexArray *array)
{
    Py_buffer probe;
    if (PyObject_GetBuffer(object, &probe, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return 0;
    array->wide = probe.itemsize == 8;
    PyBuffer_Release(&probe);
    return get_array(object, &array->view, array->wide ? 'q' : 'i', 0, &array->length);
}

static inline int64_t
index_at(const IndexArray *array, Py_ssize_t i)
{
    return array->wide ? ((const int64_t *)array->view.buf)[i] : ((const int32_t *)array->view.buf)[i];
}

/* The arrays of one call, released together. */
typedef struct {
    Py_buffer *views[24];
    int count;
} Held;

static void
release_all(Held *held)
{
    for (int i = 0; i < held->count; i++)
        PyBuffer_Release(held->views[i]);
    held->count = 0;
}

static int
hold(Held *held, PyObject *object, Py_buffer *view, char kind, int writable, Py_ssize_t *length)
{
    if (!get_array(object, view, kind, writable, length))
        return 0;
    held->views[held->count++] = view;
    return 1;
}

static int
hold_indices(Held *held, PyObject *object, IndexArray *array)
{
    if (!get_indices(object, array))
        return 0;
    held->views[held->count++] = &array->view;
    return 1;
}

/* The kernels of many arguments (sparse_entries, value_counts, presence_counts, shape_stored) take
 * them by position or by the names their comments give, which their callers use. */

/* sparse_entries(indptr, indices, data, position, labels, n_classes, rows, columns, pairs, values)
 *     -> count.
 *
 * The stored entries of a CSR chunk that fall in a feature column (position[column] >= 0),
 * are not 0 and lie in a row with a known class (labels[row] >= 0): their row, feature
 * position, (feature, class) pair ``position · n_classes + label`` and value, in stored
 * order, into the outputs (at least nnz long). */
static PyObject *
sparse_entries(PyObject *self, PyObject *args, PyObject *keywords)
{
    static char *names[] = {"indptr", "indices", "data", "position", "labels", "n_classes",
                            "rows", "columns", "pairs", "values", NULL};
    PyObject *o[9];
    long long n_classes;
    if (!PyArg_ParseTupleAndKeywords(args, keywords, "OOOOOLOOOO:sparse_entries", names, &o[0], &o[1], &o[2], &o[3],
                                     &o[4], &n_classes, &o[5], &o[6], &o[7], &o[8]))
        return NULL;
    Held held = {.count = 0};
    IndexArray indptr, indices;
    Py_buffer data, position, labels, rows, columns, pairs, values;
    Py_ssize_t n_data, n_position, n_labels, n_rows, n_columns, n_pairs, n_values;
    if (!hold_indices(&held, o[0], &indptr) || !hold_indices(&held, o[1], &indices) ||
        !hold(&held, o[2], &data, 'd', 0, &n_data) || !hold(&held, o[3], &position, 'q', 0, &n_position) ||
        !hold(&held, o[4], &labels, 'q', 0, &n_labels) || !hold(&held, o[5], &rows, 'q', 1, &n_rows) ||
        !hold(&held, o[6], &columns, 'q', 1, &n_columns) || !hold(&held, o[7], &pairs, 'q', 1, &n_pairs) ||
        !hold(&held, o[8], &values, 'd', 1, &n_values)) {
        release_all(&held);
        return NULL;
    }
    Py_ssize_t n_chunk_rows = indptr.length - 1;
    if (n_chunk_rows < 0 || n_labels != n_chunk_rows || indices.length != n_data || n_rows < n_data ||
        n_columns < n_data || n_pairs < n_data || n_values < n_data || n_classes < 1 ||
        index_at(&indptr, n_chunk_rows) != n_data) {
        release_all(&held);
        return PyErr_Format(PyExc_ValueError, "inconsistent CSR arrays");
    }
    int bad = 0;
    Py_ssize_t m = 0;
    Py_BEGIN_ALLOW_THREADS
    const double *x = data.buf;
    const int64_t *position_of = position.buf, *label = labels.buf;
    int64_t *out_rows = rows.buf, *out_columns = columns.buf, *out_pairs = pairs.buf;
    double *out_values = values.buf;
    for (Py_ssize_t r = 0; r < n_chunk_rows && !bad; r++) {
        int64_t begin = index_at(&indptr, r), end = index_at(&indptr, r + 1);
        if (begin < 0 || end < begin || end > n_data) {
            bad = 1;
            break;
        }
        if (label[r] < 0)
            continue;
        for (int64_t i = begin; i < end; i++) {
            int64_t column = index_at(&indices, i);
            if (column < 0 || column >= n_position) {
                bad = 1;
                break;
            }
            int64_t feature = position_of[column];
            if (feature < 0 || x[i] == 0)
                continue;
            out_rows[m] = r;
            out_columns[m] = feature;
            out_pairs[m] = feature * n_classes + label[r];
            out_values[m] = x[i];
            m++;
        }
    }
    Py_END_ALLOW_THREADS
    release_all(&held);
    if (bad)
        return PyErr_Format(PyExc_ValueError, "inconsistent CSR arrays");
    return PyLong_FromSsize_t(m);
}

/* Integer values are ranked by subtraction below this span (statistics._INTEGER_SPAN), and
 * only when every one is below this magnitude (statistics._EXACT_INTEGERS). */
#define INTEGER_SPAN ((int64_t)1 << 20)
#define EXACT_INTEGERS 4503599627370496.0 /* 2**52 */

/* The value counts of a CSR chunk's stored feature entries (those sparse_entries picks), as
 * statistics.ValueCounts.of_chunk gathers them for unit weights: the distinct (pair, value),
 * pair = position · n_classes + label, ascending by pair then value, with how many entries
 * have each; the number of distinct ones, -1 where the caller's numpy path is needed (a
 * missing value, a value that is not a whole number below 2**52 in magnitude, values spanning
 * 2**20 or more, keys too many for one int64 or spread too thinly to tally), -2 when out of
 * memory, -3 for inconsistent arrays.  The key is numpy's: pair · n_values + (value − lowest). */
static Py_ssize_t
count_values(const IndexArray *indptr, const IndexArray *indices, const double *x, Py_ssize_t n_data,
             const int64_t *position_of, Py_ssize_t n_position, const int64_t *label, int64_t n_classes,
             int64_t *out_pairs, double *out_values, int64_t *out_counts)
{
    Py_ssize_t n_rows = indptr->length - 1;
    int64_t *keys = malloc((size_t)(n_data ? n_data : 1) * sizeof(int64_t));
    int64_t *whole = malloc((size_t)(n_data ? n_data : 1) * sizeof(int64_t));
    if (!keys || !whole) {
        free(keys);
        free(whole);
        return -2;
    }
    Py_ssize_t n = 0, result = 0;
    int64_t lowest = 0, highest = 0, largest_pair = 0;
    for (Py_ssize_t r = 0; r < n_rows && result == 0; r++) {
        int64_t begin = index_at(indptr, r), end = index_at(indptr, r + 1);
        if (begin < 0 || end < begin || end > n_data) {
            result = -3;
            break;
        }
        if (label[r] < 0)
            continue;
        for (int64_t i = begin; i < end; i++) {
            int64_t column = index_at(indices, i);
            if (column < 0 || column >= n_position) {
                result = -3;
                break;
            }
            int64_t feature = position_of[column];
            double v = x[i];
            if (feature < 0 || v == 0)
                continue;
            if (!(fabs(v) < EXACT_INTEGERS) || (double)(int64_t)v != v) {
                result = -1; /* NaN, infinite, fractional or too large */
                break;
            }
            int64_t value = (int64_t)v, pair = feature * n_classes + label[r];
            if (n == 0 || value < lowest)
                lowest = value;
            if (n == 0 || value > highest)
                highest = value;
            if (pair > largest_pair)
                largest_pair = pair;
            keys[n] = pair;
            whole[n] = value;
            n++;
        }
    }
    if (result == 0 && n > 0 && highest - lowest >= INTEGER_SPAN)
        result = -1;
    int64_t n_values = highest - lowest + 1;
    if (result == 0 && n > 0 && (double)(largest_pair + 1) * (double)n_values >= 4611686018427387904.0 /* 2**62 */)
        result = -1;
    if (result == 0 && n > 0) {
        for (Py_ssize_t i = 0; i < n; i++)
            keys[i] = keys[i] * n_values + (whole[i] - lowest);
        result = count_sorted(keys, n, whole, out_counts);
        for (Py_ssize_t i = 0; i < result; i++) {
            out_pairs[i] = whole[i] / n_values;
            out_values[i] = (double)(lowest + whole[i] % n_values);
        }
    }
    free(keys);
    free(whole);
    return result;
}

/* value_counts(indptr, indices, data, position, labels, n_classes, out_pairs, out_values,
 *              out_counts) -> the number of distinct (pair, value), or None where the numpy
 * path is needed (count_values).  The outputs hold at least nnz entries. */
static PyObject *
value_counts(PyObject *self, PyObject *args, PyObject *keywords)
{
    static char *names[] = {"indptr", "indices", "data", "position", "labels", "n_classes",
                            "out_pairs", "out_values", "out_counts", NULL};
    PyObject *o[8];
    long long n_classes;
    if (!PyArg_ParseTupleAndKeywords(args, keywords, "OOOOOLOOO:value_counts", names, &o[0], &o[1], &o[2], &o[3], &o[4],
                                     &n_classes, &o[5], &o[6], &o[7]))
        return NULL;
    Held held = {.count = 0};
    IndexArray indptr, indices;
    Py_buffer data, position, labels, pairs, values, counts;
    Py_ssize_t n_data, n_position, n_labels, n_pairs, n_values, n_counts;
    if (!hold_indices(&held, o[0], &indptr) || !hold_indices(&held, o[1], &indices) ||
        !hold(&held, o[2], &data, 'd', 0, &n_data) || !hold(&held, o[3], &position, 'q', 0, &n_position) ||
        !hold(&held, o[4], &labels, 'q', 0, &n_labels) || !hold(&held, o[5], &pairs, 'q', 1, &n_pairs) ||
        !hold(&held, o[6], &values, 'd', 1, &n_values) || !hold(&held, o[7], &counts, 'q', 1, &n_counts)) {
        release_all(&held);
        return NULL;
    }
    Py_ssize_t n_chunk_rows = indptr.length - 1;
    if (n_chunk_rows < 0 || n_labels != n_chunk_rows || indices.length != n_data || n_pairs < n_data ||
        n_values < n_data || n_counts < n_data || n_classes < 1 || index_at(&indptr, n_chunk_rows) != n_data) {
        release_all(&held);
        return PyErr_Format(PyExc_ValueError, "inconsistent CSR arrays");
    }
    Py_ssize_t m;
    Py_BEGIN_ALLOW_THREADS
    m = count_values(&indptr, &indices, data.buf, n_data, position.buf, n_position, labels.buf, n_classes, pairs.buf,
                     values.buf, counts.buf);
    Py_END_ALLOW_THREADS
    release_all(&held);
    if (m == -3)
        return PyErr_Format(PyExc_ValueError, "inconsistent CSR arrays");
    return m >= 0 ? PyLong_FromSsize_t(m) : sort_failure((int)m);
}

/* presence_counts(indptr, indices, data, position, labels, n_classes, n_features, out_pairs,
 *                 out_counts, low, high) -> the number of distinct pairs, or None for a missing
 * value or a class code of n_classes or more (the caller's numpy path keeps those).
 *
 * What statistics.PresenceCounts.add gathers from a CSR chunk of unit weights: over the entries
 * sparse_entries picks, the distinct (feature, class) pairs position · n_classes + label,
 * ascending, with how many entries have each (out_pairs and out_counts hold at least
 * n_features · n_classes), and each feature's smallest and largest value lowered and raised
 * into low and high (n_features each). */
static PyObject *
presence_counts(PyObject *self, PyObject *args, PyObject *keywords)
{
    static char *names[] = {"indptr", "indices", "data", "position", "labels", "n_classes",
                            "n_features", "out_pairs", "out_counts", "low", "high", NULL};
    PyObject *o[9];
    long long n_classes, n_features;
    if (!PyArg_ParseTupleAndKeywords(args, keywords, "OOOOOLLOOOO:presence_counts", names, &o[0], &o[1], &o[2], &o[3],
                                     &o[4], &n_classes, &n_features, &o[5], &o[6], &o[7], &o[8]))
        return NULL;
    Held held = {.count = 0};
    IndexArray indptr, indices;
    Py_buffer data, position, labels, pairs, counts, low, high;
    Py_ssize_t n_data, n_position, n_labels, n_pairs, n_counts, n_low, n_high;
    if (!hold_indices(&held, o[0], &indptr) || !hold_indices(&held, o[1], &indices) ||
        !hold(&held, o[2], &data, 'd', 0, &n_data) || !hold(&held, o[3], &position, 'q', 0, &n_position) ||
        !hold(&held, o[4], &labels, 'q', 0, &n_labels) || !hold(&held, o[5], &pairs, 'q', 1, &n_pairs) ||
        !hold(&held, o[6], &counts, 'q', 1, &n_counts) || !hold(&held, o[7], &low, 'd', 1, &n_low) ||
        !hold(&held, o[8], &high, 'd', 1, &n_high)) {
        release_all(&held);
        return NULL;
    }
    Py_ssize_t n_chunk_rows = indptr.length - 1;
    uint64_t n_keys = (uint64_t)(n_features > 0 ? n_features : 0) * (uint64_t)(n_classes > 0 ? n_classes : 0);
    int consistent = n_chunk_rows >= 0 && n_labels == n_chunk_rows && indices.length == n_data && n_classes >= 1 &&
                     n_features >= 0 && (uint64_t)n_pairs >= n_keys && (uint64_t)n_counts >= n_keys &&
                     n_low == n_features && n_high == n_features && index_at(&indptr, n_chunk_rows) == n_data;
    const int64_t *position_of = position.buf;
    for (Py_ssize_t i = 0; consistent && i < n_position; i++)
        consistent = position_of[i] < n_features;
    if (!consistent) {
        release_all(&held);
        return PyErr_Format(PyExc_ValueError, "inconsistent CSR arrays");
    }
    uint32_t *tally = calloc(n_keys ? n_keys : 1, sizeof(uint32_t));
    uint64_t *used = calloc((n_keys + 63) / 64 + 1, sizeof(uint64_t));
    if (!tally || !used) {
        free(tally);
        free(used);
        release_all(&held);
        return PyErr_NoMemory();
    }
    int bad = 0, missing = 0;
    Py_ssize_t m = 0;
    Py_BEGIN_ALLOW_THREADS
    const double *x = data.buf;
    const int64_t *label = labels.buf;
    double *lowest = low.buf, *highest = high.buf;
    for (Py_ssize_t r = 0; r < n_chunk_rows && !bad && !missing; r++) {
        int64_t begin = index_at(&indptr, r), end = index_at(&indptr, r + 1);
        if (begin < 0 || end < begin || end > n_data) {
            bad = 1;
            break;
        }
        if (label[r] < 0)
            continue;
        for (int64_t i = begin; i < end; i++) {
            int64_t column = index_at(&indices, i);
            if (column < 0 || column >= n_position) {
                bad = 1;
                break;
            }
            int64_t feature = position_of[column];
            double v = x[i];
            if (feature < 0 || v == 0)
                continue;
            if (isnan(v) || label[r] >= n_classes) {
                missing = 1;
                break;
            }
            tally_key(tally, used, (uint64_t)(feature * n_classes + label[r]));
            if (v < lowest[feature])
                lowest[feature] = v;
            if (v > highest[feature])
                highest[feature] = v;
        }
    }
    if (!bad && !missing)
        m = emit_tally(tally, used, n_keys, 0, pairs.buf, counts.buf, 0);
    Py_END_ALLOW_THREADS
    free(tally);
    free(used);
    release_all(&held);
    if (bad)
        return PyErr_Format(PyExc_ValueError, "inconsistent CSR arrays");
    if (missing)
        Py_RETURN_NONE;
    return PyLong_FromSsize_t(m);
}

/* merge_integer_counts(keys_a, counts_a, keys_b, counts_b, out_keys, out_counts) -> m: merge_counts
 * for runs of distinct int64 keys, ascending. */
static PyObject *
merge_integer_counts(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    Held held = {.count = 0};
    Py_buffer keys_a, counts_a, keys_b, counts_b, out_keys, out_counts;
    Py_ssize_t n_keys_a, n_a, n_keys_b, n_b, n_out_keys, n_out;
    if (!hold(&held, o[0], &keys_a, 'q', 0, &n_keys_a) || !hold(&held, o[1], &counts_a, 'q', 0, &n_a) ||
        !hold(&held, o[2], &keys_b, 'q', 0, &n_keys_b) || !hold(&held, o[3], &counts_b, 'q', 0, &n_b) ||
        !hold(&held, o[4], &out_keys, 'q', 1, &n_out_keys) || !hold(&held, o[5], &out_counts, 'q', 1, &n_out)) {
        release_all(&held);
        return NULL;
    }
    if (n_keys_a != n_a || n_keys_b != n_b || n_out < n_a + n_b || n_out_keys < n_a + n_b) {
        release_all(&held);
        return PyErr_Format(PyExc_ValueError, "inconsistent runs");
    }
    Py_ssize_t m = 0;
    Py_BEGIN_ALLOW_THREADS
    const int64_t *ka = keys_a.buf, *kb = keys_b.buf, *ca = counts_a.buf, *cb = counts_b.buf;
    int64_t *keys = out_keys.buf, *counts = out_counts.buf;
    Py_ssize_t i = 0, j = 0;
    while (i < n_a || j < n_b) {
        if (j == n_b || (i < n_a && ka[i] < kb[j])) {
            keys[m] = ka[i];
            counts[m++] = ca[i++];
        } else if (i == n_a || kb[j] < ka[i]) {
            keys[m] = kb[j];
            counts[m++] = cb[j++];
        } else {
            keys[m] = ka[i];
            counts[m++] = ca[i++] + cb[j++];
        }
    }
    Py_END_ALLOW_THREADS
    release_all(&held);
    return PyLong_FromSsize_t(m);
}

/* Whether key (real, imag) a comes before b: numpy's order of complex numbers without NaN. */
static inline int
comes_before(const double *a, const double *b)
{
    return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

/* merge_counts(keys_a, counts_a, keys_b, counts_b, out_keys, out_counts) -> m, or None for a
 * key holding NaN.  Two runs of distinct complex keys, ascending (each passed as its float64
 * view: real and imaginary parts in turn), with one int64 count each, merged into out (at
 * least both lengths together): the keys ascending, a key of both runs once, its counts added
 * (statistics._merged_runs for sums of one digit at the same scale). */
static PyObject *
merge_counts(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    Held held = {.count = 0};
    Py_buffer keys_a, counts_a, keys_b, counts_b, out_keys, out_counts;
    Py_ssize_t n_keys_a, n_a, n_keys_b, n_b, n_out_keys, n_out;
    if (!hold(&held, o[0], &keys_a, 'd', 0, &n_keys_a) || !hold(&held, o[1], &counts_a, 'q', 0, &n_a) ||
        !hold(&held, o[2], &keys_b, 'd', 0, &n_keys_b) || !hold(&held, o[3], &counts_b, 'q', 0, &n_b) ||
        !hold(&held, o[4], &out_keys, 'd', 1, &n_out_keys) || !hold(&held, o[5], &out_counts, 'q', 1, &n_out)) {
        release_all(&held);
        return NULL;
    }
    if (n_keys_a != 2 * n_a || n_keys_b != 2 * n_b || n_out < n_a + n_b || n_out_keys < 2 * (n_a + n_b)) {
        release_all(&held);
        return PyErr_Format(PyExc_ValueError, "inconsistent runs");
    }
    Py_ssize_t m = 0;
    int has_nan = 0;
    Py_BEGIN_ALLOW_THREADS
    const double *ka = keys_a.buf, *kb = keys_b.buf;
    for (Py_ssize_t i = 0; i < 2 * n_a && !has_nan; i++)
        has_nan = isnan(ka[i]);
    for (Py_ssize_t i = 0; i < 2 * n_b && !has_nan; i++)
        has_nan = isnan(kb[i]);
    if (!has_nan) {
        const int64_t *ca = counts_a.buf, *cb = counts_b.buf;
        double *keys = out_keys.buf;
        int64_t *counts = out_counts.buf;
        Py_ssize_t i = 0, j = 0;
        while (i < n_a || j < n_b) {
            const double *key;
            int64_t count;
            if (j == n_b || (i < n_a && comes_before(ka + 2 * i, kb + 2 * j))) {
                key = ka + 2 * i;
                count = ca[i++];
            } else if (i == n_a || comes_before(kb + 2 * j, ka + 2 * i)) {
                key = kb + 2 * j;
                count = cb[j++];
            } else {
                key = ka + 2 * i;
                count = ca[i++] + cb[j++];
            }
            keys[2 * m] = key[0];
            keys[2 * m + 1] = key[1];
            counts[m++] = count;
        }
    }
    Py_END_ALLOW_THREADS
    release_all(&held);
    if (has_nan)
        Py_RETURN_NONE;
    return PyLong_FromSsize_t(m);
}

/* column_ranges(columns, values, low, high): low[c] and high[c] lowered and raised to every
 * value of column c (values without NaN; low and high start at +inf and -inf). */
static PyObject *
column_ranges(PyObject *self, PyObject *args)
{
    PyObject *o[4];
    if (!PyArg_ParseTuple(args, "OOOO", &o[0], &o[1], &o[2], &o[3]))
        return NULL;
    Held held = {.count = 0};
    Py_buffer columns, values, low, high;
    Py_ssize_t n, n_values, n_low, n_high;
    if (!hold(&held, o[0], &columns, 'q', 0, &n) || !hold(&held, o[1], &values, 'd', 0, &n_values) ||
        !hold(&held, o[2], &low, 'd', 1, &n_low) || !hold(&held, o[3], &high, 'd', 1, &n_high)) {
        release_all(&held);
        return NULL;
    }
    if (n_values != n || n_low != n_high) {
        release_all(&held);
        return PyErr_Format(PyExc_ValueError, "columns and values differ in length");
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    const int64_t *column = columns.buf;
    const double *x = values.buf;
    double *lowest = low.buf, *highest = high.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t c = column[i];
        if (c < 0 || c >= n_low) {
            bad = 1;
            break;
        }
        if (x[i] < lowest[c])
            lowest[c] = x[i];
        if (x[i] > highest[c])
            highest[c] = x[i];
    }
    Py_END_ALLOW_THREADS
    release_all(&held);
    if (bad)
        return PyErr_Format(PyExc_ValueError, "a column outside the ranges");
    Py_RETURN_NONE;
}

/* What shaping a value of one attribute needs first, in one cache line's half: its column
 * (-1: not shaped), whether the column is nominal, its knots (sorted by value), p̃ below its
 * first knot and its zero shift T(p̃(0)). */
typedef struct {
    int32_t column;
    int32_t nominal;
    int32_t knot_start;
    int32_t knot_count;
    double first_probability;
    double zero_shift;
    /* the column's whole values low..high shaped already, at lookup[table_start + v − low]
     * (table_start −1: none) */
    double table_low, table_high;
    int64_t table_start;
} Attribute;

/* Attribute records are fetched this many values ahead: a sparse row's attributes are
 * scattered over the table, so each record is a cache miss otherwise. */
#define PREFETCH_AHEAD 16
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif

/* One knot: its value and p̃ there (16 bytes: the knots of a column share cache lines). */
typedef struct {
    double value;
    double probability;
} Knot;

/* The fitted shaper's tables (plugins/shaper.py, Shaper._index_knots) laid out for lookups. */
typedef struct {
    const Attribute *attribute;
    const Knot *knot;
    const double *zero_probability, *default_probability;
    int zero_bin;
} Knots;

/* The last of the n knots (sorted by value, distinct) whose value is at most ``v``, or -1:
 * numpy's searchsorted(side="right") - 1.  Without a data-dependent branch, so the loads
 * of consecutive values overlap instead of waiting on mispredicted jumps. */
static Py_ssize_t
last_knot_at_most(const Knot *knots, Py_ssize_t n, double v)
{
    if (n == 0)
        return -1;
    const Knot *base = knots;
    while (n > 1) {
        Py_ssize_t half = n / 2;
        base = base[half].value <= v ? base + half : base;
        n -= half;
    }
    return base->value <= v ? base - knots : -1;
}

/* The shaped value of ``v`` (not NaN) of attribute ``a`` (a shaped one, in column
 * a->column): Shaper._probabilities_at, then the transform "prob" and the zero shift of
 * Shaper._shape.
 *
 * The column's last knot at or below v is found among the column's own knots; numpy's
 * Shaper._knot_below ranks v among every distinct knot value first, which picks the same
 * knot: a knot value is at most v exactly when its rank is at most v's.  The slope to the
 * next knot is Shaper._index_knots's, (p₁ − p₀) / (v₁ − v₀), the same operations. */
static double
shaped_value(const Knots *k, const Attribute *a, double v)
{
    const Knot *knots = k->knot + a->knot_start;
    Py_ssize_t below = last_knot_at_most(knots, a->knot_count, v);
    int at_knot = below >= 0;
    double probability;
    if (!at_knot) {
        probability = a->first_probability;
    } else {
        const Knot *knot = &knots[below];
        probability = knot->probability;
        if (knot->value != v && below + 1 < a->knot_count) {
            double slope = (knot[1].probability - knot->probability) / (knot[1].value - knot->value);
            probability = slope * (v - knot->value) + knot->probability;
        }
    }
    if (k->zero_bin && v == 0)
        probability = k->zero_probability[a->column];
    if (a->nominal) {
        int exact = at_knot && knots[below].value == v;
        probability = exact ? knots[below].probability : k->default_probability[a->column];
    }
    return probability - a->zero_shift;
}

/* shape_stored(indices, data, position, out, knot_start, knot_value, knot_probability,
 *              first_probability, zero_probability, default_probability,
 *              missing_probability, zero_shift, column_nominal, zero_bin, missing_bin,
 *              table_start, table_low, table_high, lookup)
 *
 * out[i] = the shaped data[i] where its column is a shaped one (position[column] >= 0, the
 * shaper's column), else data[i].  The caller makes sure the fit needs none of the scaled
 * interpolation (Shaper._interpolated) and the transform is "prob" with the zero shift.
 * A NaN becomes the missing bin's value (missing_bin) or stays NaN.  A non-zero whole value
 * v of a column with table_start[column] >= 0 and table_low <= v <= table_high is read from
 * lookup[table_start + v − table_low], which the caller filled with those values shaped (by
 * Shaper._shape: the same floats as this kernel's, as the tests check), one load where the
 * search of a common word's knots waited on several.  Returns True, or False for tables too
 * large for its compact layout (2**31 columns or knots; out is not written). */
static PyObject *
shape_stored(PyObject *self, PyObject *args, PyObject *keywords)
{
    static char *names[] = {"indices", "data", "position", "out", "knot_start", "knot_value", "knot_probability",
                            "first_probability", "zero_probability", "default_probability", "missing_probability",
                            "zero_shift", "column_nominal", "zero_bin", "missing_bin", "table_start", "table_low",
                            "table_high", "lookup", NULL};
    PyObject *o[17];
    int zero_bin, missing_bin;
    if (!PyArg_ParseTupleAndKeywords(args, keywords, "OOOOOOOOOOOOOppOOOO:shape_stored", names, &o[0], &o[1], &o[2],
                                     &o[3], &o[4], &o[5], &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &o[12], &zero_bin,
                                     &missing_bin, &o[13], &o[14], &o[15], &o[16]))
        return NULL;
    Held held = {.count = 0};
    IndexArray indices;
    Py_buffer data, position, out, start, value, probability, first, zero, fallback, missing, shift, nominal;
    Py_buffer lookup_start, lookup_low, lookup_high, lookup;
    Py_ssize_t n_data, n_position, n_out, n_start, n_knots, n_probability, n_first, n_zero, n_default, n_missing,
        n_shift, c, n_lookup_start, n_lookup_low, n_lookup_high, n_lookup;
    if (!hold_indices(&held, o[0], &indices) || !hold(&held, o[1], &data, 'd', 0, &n_data) ||
        !hold(&held, o[2], &position, 'q', 0, &n_position) || !hold(&held, o[3], &out, 'd', 1, &n_out) ||
        !hold(&held, o[4], &start, 'q', 0, &n_start) || !hold(&held, o[5], &value, 'd', 0, &n_knots) ||
        !hold(&held, o[6], &probability, 'd', 0, &n_probability) || !hold(&held, o[7], &first, 'd', 0, &n_first) ||
        !hold(&held, o[8], &zero, 'd', 0, &n_zero) || !hold(&held, o[9], &fallback, 'd', 0, &n_default) ||
        !hold(&held, o[10], &missing, 'd', 0, &n_missing) || !hold(&held, o[11], &shift, 'd', 0, &n_shift) ||
        !hold(&held, o[12], &nominal, '?', 0, &c) || !hold(&held, o[13], &lookup_start, 'q', 0, &n_lookup_start) ||
        !hold(&held, o[14], &lookup_low, 'd', 0, &n_lookup_low) ||
        !hold(&held, o[15], &lookup_high, 'd', 0, &n_lookup_high) || !hold(&held, o[16], &lookup, 'd', 0, &n_lookup)) {
        release_all(&held);
        return NULL;
    }
    int consistent = indices.length == n_data && n_out == n_data && n_probability == n_knots && n_start == c + 1 &&
                     n_first == c && n_zero == c && n_default == c && n_missing == c && n_shift == c &&
                     n_lookup_start == c && n_lookup_low == c && n_lookup_high == c;
    const int64_t *knot_start = start.buf, *position_of = position.buf, *table_start = lookup_start.buf;
    const double *table_low = lookup_low.buf, *table_high = lookup_high.buf;
    for (Py_ssize_t column = 0; consistent && column < c; column++)
        consistent = knot_start[column] >= 0 && knot_start[column] <= knot_start[column + 1] &&
                     knot_start[column + 1] <= n_knots &&
                     (table_start[column] < 0 ||
                      (table_low[column] <= table_high[column] && table_high[column] - table_low[column] < n_lookup &&
                       table_start[column] + (int64_t)(table_high[column] - table_low[column]) < n_lookup));
    for (Py_ssize_t i = 0; consistent && i < n_position; i++)
        consistent = position_of[i] < c;
    if (!consistent) {
        release_all(&held);
        return PyErr_Format(PyExc_ValueError, "inconsistent shaper tables");
    }
    if (c >= INT32_MAX || n_knots >= INT32_MAX) {
        release_all(&held);
        Py_RETURN_FALSE; /* beyond the compact tables: the caller's numpy path shapes them */
    }
    Attribute *attribute = malloc((size_t)(n_position ? n_position : 1) * sizeof(Attribute));
    Knot *knot = malloc((size_t)(n_knots ? n_knots : 1) * sizeof(Knot));
    if (!attribute || !knot) {
        free(attribute);
        free(knot);
        release_all(&held);
        return PyErr_NoMemory();
    }
    const double *knot_value = value.buf, *knot_probability = probability.buf;
    const double *first_probability = first.buf, *zero_shift = shift.buf, *missing_probability = missing.buf;
    const char *column_nominal = nominal.buf;
    for (Py_ssize_t j = 0; j < n_knots; j++)
        knot[j] = (Knot){knot_value[j], knot_probability[j]};
    for (Py_ssize_t i = 0; i < n_position; i++) {
        int64_t column = position_of[i];
        if (column < 0) {
            attribute[i] = (Attribute){-1, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, -1};
        } else {
            attribute[i] = (Attribute){(int32_t)column,
                                       column_nominal[column] != 0,
                                       (int32_t)knot_start[column],
                                       (int32_t)(knot_start[column + 1] - knot_start[column]),
                                       first_probability[column],
                                       zero_shift[column],
                                       table_low[column],
                                       table_high[column],
                                       table_start[column]};
        }
    }
    Knots k = {attribute, knot, zero.buf, fallback.buf, zero_bin};
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    const double *x = data.buf, *table = lookup.buf;
    double *shaped = out.buf;
    for (Py_ssize_t i = 0; i < n_data; i++) {
        int64_t index = index_at(&indices, i);
        if (index < 0 || index >= n_position) {
            bad = 1;
            break;
        }
        if (i + PREFETCH_AHEAD < n_data) {
            int64_t ahead = index_at(&indices, i + PREFETCH_AHEAD);
            if (ahead >= 0 && ahead < n_position)
                PREFETCH(&attribute[ahead]);
            /* a record fetched earlier is in cache now: its table's start, or its knots, next */
            int64_t nearer = index_at(&indices, i + PREFETCH_AHEAD / 2);
            if (nearer >= 0 && nearer < n_position && attribute[nearer].table_start >= 0)
                PREFETCH(&table[attribute[nearer].table_start]);
            else if (nearer >= 0 && nearer < n_position && attribute[nearer].knot_count)
                PREFETCH(&knot[attribute[nearer].knot_start + attribute[nearer].knot_count / 2]);
        }
        const Attribute *a = &attribute[index];
        double v = x[i];
        if (a->column < 0) {
            shaped[i] = v;
        } else if (a->table_start >= 0 && v >= a->table_low && v <= a->table_high && v != 0 &&
                   (double)(int64_t)v == v) {
            shaped[i] = table[a->table_start + (int64_t)(v - a->table_low)];
        } else if (isnan(x[i])) {
            /* the numpy path shapes a missing value at 0, then replaces it */
            shaped[i] = missing_bin ? missing_probability[a->column] - a->zero_shift : NAN;
        } else {
            shaped[i] = shaped_value(&k, a, x[i]);
        }
    }
    Py_END_ALLOW_THREADS
    free(attribute);
    free(knot);
    release_all(&held);
    if (bad)
        return PyErr_Format(PyExc_ValueError, "a column outside the shaper's tables");
    Py_RETURN_TRUE;
}

/* normalize_stored(indptr, indices, data, acted, order, out) -> None
 *
 * Per row, the sum of |x|**order over its acted (acted[column]), non-NaN entries in stored
 * order, as numpy's bincount adds them; its square root for order 2; acted entries divided
 * by it (by 1 where it is 0), other entries copied (RowNormalizer.transform).  A row whose
 * plain norm is unsafe (it overflows, or its largest power is below 2**-968) has its acted
 * entries scaled first by the power of two that brings its largest value into [0.5, 1)
 * (exact), or, when that value is infinite, set to their limit (±1 for ±inf, 0 for finite
 * values, NaN for NaN), and its norm summed again from them. */
static PyObject *
normalize_stored(PyObject *self, PyObject *args)
{
    PyObject *o[5];
    int order;
    if (!PyArg_ParseTuple(args, "OOOOiO", &o[0], &o[1], &o[2], &o[3], &order, &o[4]))
        return NULL;
    if (order != 1 && order != 2)
        return PyErr_Format(PyExc_ValueError, "order %d is neither 1 nor 2", order);
    Held held = {.count = 0};
    IndexArray indptr, indices;
    Py_buffer data, acted, out;
    Py_ssize_t n_data, n_acted, n_out;
    if (!hold_indices(&held, o[0], &indptr) || !hold_indices(&held, o[1], &indices) ||
        !hold(&held, o[2], &data, 'd', 0, &n_data) || !hold(&held, o[3], &acted, '?', 0, &n_acted) ||
        !hold(&held, o[4], &out, 'd', 1, &n_out)) {
        release_all(&held);
        return NULL;
    }
    Py_ssize_t n_rows = indptr.length - 1;
    if (n_rows < 0 || indices.length != n_data || n_out != n_data || index_at(&indptr, n_rows) != n_data) {
        release_all(&held);
        return PyErr_Format(PyExc_ValueError, "inconsistent CSR arrays");
    }
    int bad = 0;
    const double smallest_safe_power = ldexp(1.0, -968);
    Py_BEGIN_ALLOW_THREADS
    const double *x = data.buf;
    const char *acted_column = acted.buf;
    double *normalized = out.buf;
    for (Py_ssize_t r = 0; r < n_rows && !bad; r++) {
        int64_t begin = index_at(&indptr, r), end = index_at(&indptr, r + 1);
        if (begin < 0 || end < begin || end > n_data) {
            bad = 1;
            break;
        }
        double sum = 0.0, largest = 0.0;
        for (int64_t i = begin; i < end; i++) {
            int64_t column = index_at(&indices, i);
            if (column < 0 || column >= n_acted) {
                bad = 1;
                break;
            }
            if (!acted_column[column] || isnan(x[i]))
                continue;
            double magnitude = fabs(x[i]);
            sum += order == 2 ? magnitude * magnitude : magnitude;
            if (magnitude > largest)
                largest = magnitude;
        }
        if (bad)
            break;
        double norm = order == 2 ? sqrt(sum) : sum;
        double largest_power = order == 2 ? largest * largest : largest;
        int rescaled = largest > 0 && (!isfinite(norm) || largest_power < smallest_safe_power);
        if (rescaled) {
            int exponent = 0;
            if (isfinite(largest))
                frexp(largest, &exponent);
            sum = 0.0;
            for (int64_t i = begin; i < end; i++) {
                if (!acted_column[index_at(&indices, i)])
                    continue;
                double y = isfinite(largest) ? ldexp(x[i], -exponent)
                           : isinf(x[i])     ? copysign(1.0, x[i])
                           : isnan(x[i])     ? NAN
                                             : 0.0;
                normalized[i] = y;
                if (!isnan(x[i]))
                    sum += order == 2 ? y * y : fabs(y);
            }
            norm = order == 2 ? sqrt(sum) : sum;
        }
        double divisor = norm > 0 ? norm : 1.0;
        for (int64_t i = begin; i < end; i++) {
            int64_t column = index_at(&indices, i);
            normalized[i] = acted_column[column] ? (rescaled ? normalized[i] : x[i]) / divisor : x[i];
        }
    }
    Py_END_ALLOW_THREADS
    release_all(&held);
    if (bad)
        return PyErr_Format(PyExc_ValueError, "inconsistent CSR arrays");
    Py_RETURN_NONE;
}

/* The inverse of the standard normal distribution function: Cephes' ndtri (Cephes Math Library
 * Release 2.1, copyright 1984, 1987, 1989 by Stephen L. Moshier), as scipy.special.ndtri computes it
 * (scipy/special/xsf/cephes/ndtri.h and polevl.h in scipy 1.17): the same rational approximations,
 * coefficients, Horner evaluations and libm log and sqrt in the same order, so its values are scipy's
 * bit for bit (tests/test_kernels.py compares them) and bns need not import scipy.special (0.16 s).
 *
 * For y in (exp(-2), 1 - exp(-2)), with w = y - 0.5: x = sqrt(2π)·(w + w³·P0(w²)/Q0(w²)); towards
 * either end, with z = sqrt(-2 log y) of the nearer tail: x = z - log(z)/z - (1/z)·P(1/z)/Q(1/z), P1/Q1
 * for z < 8 (y > exp(-32)) and P2/Q2 beyond.  0 and 1 give -inf and inf, outside [0, 1] NaN. */

/* approximation for 0 <= |y - 0.5| <= 3/8 */
static const double NDTRI_P0[5] = {
    -5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
    1.39312609387279679503E1,  -1.23916583867381258016E0,
};
static const double NDTRI_Q0[8] = {
    /* 1.00000000000000000000E0, */
    1.95448858338141759834E0, 4.67627912898881538453E0,  8.63602421390890590575E1, -2.25462687854119370527E2,
    2.00260212380060660359E2, -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0,
};
/* z = sqrt(-2 log y) between 2 and 8: y between exp(-2) = .135 and exp(-32) = 1.27e-14 */
static const double NDTRI_P1[9] = {
    4.05544892305962419923E0,   3.15251094599893866154E1,   5.71628192246421288162E1,
    4.40805073893200834700E1,   1.46849561928858024014E1,   2.18663306850790267539E0,
    -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4,
};
static const double NDTRI_Q1[8] = {
    /* 1.00000000000000000000E0, */
    1.57799883256466749731E1,   4.53907635128879210584E1,   4.13172038254672030440E1,
    1.50425385692907503408E1,   2.50464946208309415979E0,   -1.42182922854787788574E-1,
    -3.80806407691578277194E-2, -9.33259480895457427372E-4,
};
/* z between 8 and 64: y between exp(-32) and exp(-2048) */
static const double NDTRI_P2[9] = {
    3.23774891776946035970E0,  6.91522889068984211695E0,  3.93881025292474443415E0,
    1.33303460815807542389E0,  2.01485389549179081538E-1, 1.23716634817820021358E-2,
    3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9,
};
static const double NDTRI_Q2[8] = {
    /* 1.00000000000000000000E0, */
    6.02427039364742014255E0,  3.67983563856160859403E0,  1.37702099489081330271E0,  2.16236993594496635890E-1,
    1.34204006088543189037E-2, 3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9,
};
#define NDTRI_EXP_MINUS_2 0.13533528323661269189
#define NDTRI_SQRT_2PI 2.50662827463100050242E0

/* Cephes' polevl: the polynomial of degree n with coefficients c[0] (of x^n) .. c[n], by Horner's rule. */
static double
polevl(double x, const double *c, int n)
{
    double y = c[0];
    for (int i = 1; i <= n; i++)
        y = y * x + c[i];
    return y;
}

/* Cephes' p1evl: the same with a leading coefficient 1 left out of c (c[0] .. c[n - 1]). */
static double
p1evl(double x, const double *c, int n)
{
    double y = x + c[0];
    for (int i = 1; i < n; i++)
        y = y * x + c[i];
    return y;
}

static double
inverse_normal(double y0)
{
    if (y0 == 0.0)
        return -INFINITY;
    if (y0 == 1.0)
        return INFINITY;
    if (y0 < 0.0 || y0 > 1.0)
        return NAN;
    int upper = 0;
    double y = y0;
    if (y > 1.0 - NDTRI_EXP_MINUS_2) {
        y = 1.0 - y;
        upper = 1;
    }
    if (y > NDTRI_EXP_MINUS_2) {
        y = y - 0.5;
        double y2 = y * y;
        double x = y + y * (y2 * polevl(y2, NDTRI_P0, 4) / p1evl(y2, NDTRI_Q0, 8));
        return x * NDTRI_SQRT_2PI;
    }
    double x = sqrt(-2.0 * log(y));
    double x0 = x - log(x) / x;
    double z = 1.0 / x;
    double x1 = x < 8.0 ? z * polevl(z, NDTRI_P1, 8) / p1evl(z, NDTRI_Q1, 8)
                        : z * polevl(z, NDTRI_P2, 8) / p1evl(z, NDTRI_Q2, 8);
    x = x0 - x1;
    return upper ? x : -x;
}

/* ndtri(probabilities, out): out[i] the inverse normal of probabilities[i] (scipy.special.ndtri's bits). */
static PyObject *
ndtri(PyObject *self, PyObject *args)
{
    PyObject *o[2];
    if (!PyArg_ParseTuple(args, "OO", &o[0], &o[1]))
        return NULL;
    Held held = {.count = 0};
    Py_buffer probabilities, out;
    Py_ssize_t n, n_out;
    if (!hold(&held, o[0], &probabilities, 'd', 0, &n) || !hold(&held, o[1], &out, 'd', 1, &n_out)) {
        release_all(&held);
        return NULL;
    }
    if (n_out != n) {
        release_all(&held);
        return PyErr_Format(PyExc_ValueError, "probabilities and out differ in length");
    }
    Py_BEGIN_ALLOW_THREADS
    const double *p = probabilities.buf;
    double *x = out.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        x[i] = inverse_normal(p[i]);
    Py_END_ALLOW_THREADS
    release_all(&held);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"sorted_counts", sorted_counts, METH_VARARGS, "The distinct int64 keys, ascending, and their counts."},
    {"stable_order", stable_order, METH_VARARGS, "The stable ascending order of int64 keys."},
    {"sparse_entries", (PyCFunction)(void (*)(void))sparse_entries, METH_VARARGS | METH_KEYWORDS,
     "The non-zero feature entries of a CSR chunk's known rows."},
    {"value_counts", (PyCFunction)(void (*)(void))value_counts, METH_VARARGS | METH_KEYWORDS,
     "The distinct (pair, value) of a CSR chunk's entries, counted."},
    {"presence_counts", (PyCFunction)(void (*)(void))presence_counts, METH_VARARGS | METH_KEYWORDS,
     "A CSR chunk's non-zero (feature, class) pairs counted."},
    {"merge_integer_counts", merge_integer_counts, METH_VARARGS, "Two sorted runs of int64 keys with counts, merged."},
    {"merge_counts", merge_counts, METH_VARARGS, "Two sorted runs of complex keys with counts, merged."},
    {"column_ranges", column_ranges, METH_VARARGS, "Each column's smallest and largest value."},
    {"shape_stored", (PyCFunction)(void (*)(void))shape_stored, METH_VARARGS | METH_KEYWORDS,
     "The shaper's map of a CSR chunk's stored values."},
    {"normalize_stored", normalize_stored, METH_VARARGS, "A CSR chunk's rows divided by their L1 or L2 norms."},
    {"ndtri", ndtri, METH_VARARGS, "The inverse normal distribution function of each probability (scipy.special.ndtri's)."},
    {NULL, NULL, 0, NULL},
};

/* The interface number filterkit/kernels.py (INTERFACES) expects: bump both whenever a function's arguments or
   results change, so that a module built from older source is refused with one error line instead of misbehaving. */
#define INTERFACE 3

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__kernels(void)
{
    PyObject *created = PyModule_Create(&module);
    if (created != NULL && PyModule_AddIntConstant(created, "INTERFACE", INTERFACE) < 0)
        Py_CLEAR(created);
    return created;
}
