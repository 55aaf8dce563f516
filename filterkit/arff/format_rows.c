/*
 * format_rows, every writer's inner loop (see its comment), part of filterkit.arff._speedups:
 * rows of numbers and ready texts as ARFF data lines, the numbers printed by numbers.c
 * (format_shortest for Python's repr of non-integral numbers; tests compare it with repr
 * and with tests/oracles.py's format_rows_in_python).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "format_rows.h"
#include "labels.h"
#include "numbers.h"

/* Where format_rows writes: the bytes object it returns, sized beforehand for the longest
   text its entries can take, so it never grows while the GIL is released. */
typedef struct {
    char *data;
    Py_ssize_t size;
    Py_ssize_t capacity;
} Output;

/* Room for size more bytes: where they go, or NULL if they would pass the capacity (which
   format_rows's bound rules out).  Needs no GIL. */
static char *
output_reserve(Output *out, Py_ssize_t size)
{
    return out->size + size <= out->capacity ? out->data + out->size : NULL;
}

static int
output_append(Output *out, const char *text, Py_ssize_t size)
{
    char *end = output_reserve(out, size);
    if (!end)
        return -1;
    memcpy(end, text, size);
    out->size += size;
    return 0;
}

/* Decimal digits of a signed integer (what "%lld" gives, without snprintf's cost). */
static int
output_integer(Output *out, long long number)
{
    char digits[24];
    int position = (int)sizeof(digits);
    unsigned long long magnitude = number < 0 ? 0ULL - (unsigned long long)number : (unsigned long long)number;
    do {
        digits[--position] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (number < 0)
        digits[--position] = '-';
    return output_append(out, digits + position, (Py_ssize_t)sizeof(digits) - position);
}

/* How format_rows writes numbers (filterkit.arff.writer.NumberFormat). */
typedef struct {
    int digits; /* 1 to 16 significant digits; 0 (or 17) exact */
    int float32;
} NumberFormat;

/* (2^25 - 1) * 2^103, halfway between float32's largest value and 2^128: a double this
   large or larger rounds to float32's infinity. */
#define FLOAT32_OVERFLOW 0x1.ffffffp+127

/* The writer's exact number format (filterkit.arff.writer.format_numbers): integers below
   2**53 without a decimal point ("-0" for negative zero), "?" for NaN, Java's "Infinity",
   and otherwise Python's repr (the shortest text that reads back to the same double). */
static int
output_exact(Output *out, double value)
{
    if (value != value)
        return output_append(out, "?", 1);
    if (value == HUGE_VAL)
        return output_append(out, "Infinity", 8);
    if (value == -HUGE_VAL)
        return output_append(out, "-Infinity", 9);
    if (fabs(value) < 9007199254740992.0 && value == floor(value)) {
        if (value == 0 && signbit(value))
            return output_append(out, "-0", 2);
        return output_integer(out, (long long)value);
    }
    char *end = output_reserve(out, SHORTEST_ROOM);
    if (!end)
        return -1;
    int length = format_shortest(value, end);
    if (length) {
        out->size += length;
        return 0;
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    char *text = PyOS_double_to_string(value, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    int status = text ? output_append(out, text, (Py_ssize_t)strlen(text)) : -1;
    PyMem_Free(text);
    PyGILState_Release(gil);
    return status;
}

/* ``--digits``: the value correctly rounded to digits significant digits, written as
   output_exact writes that decimal's double; exactly when that double would overflow. */
static int
output_digits(Output *out, double value, int digits)
{
    double unchanged = digits < 16 ? (double)ten_to(digits) : 9007199254740992.0;
    if (!isfinite(value) || (fabs(value) < unchanged && value == floor(value)))
        return output_exact(out, value); /* an integer of at most digits digits, 0 among them */
    char *end = output_reserve(out, SHORTEST_ROOM);
    if (!end)
        return -1;
    double exactly_rounded;
    int length = format_rounded(value, digits, end, &exactly_rounded);
    if (length > 0) {
        out->size += length;
        return 0;
    }
    if (length == 0)
        return output_exact(out, exactly_rounded);
    /* Python's correctly rounded (half to even) digits, read back */
    PyGILState_STATE gil = PyGILState_Ensure();
    char *text = PyOS_double_to_string(value, 'e', digits - 1, 0, NULL);
    double rounded = text ? PyOS_string_to_double(text, NULL, NULL) : -1.0;
    int failed = PyErr_Occurred() != NULL;
    PyMem_Free(text);
    PyGILState_Release(gil);
    if (failed)
        return -1;
    return output_exact(out, isinf(rounded) ? value : rounded);
}

/* ``--float32``: the shortest decimal that reads back as the value's nearest float32,
   written as output_exact writes that decimal's double; a value beyond float32's range
   exactly. */
static int
output_float32(Output *out, double value)
{
    if (!isfinite(value) || fabs(value) >= FLOAT32_OVERFLOW)
        return output_exact(out, value);
    double narrow = (double)(float)value;
    if (fabs(narrow) < 16777216.0 && narrow == floor(narrow))
        return output_exact(out, narrow); /* a whole float32 below 2^24 is its own shortest decimal */
    char *end = output_reserve(out, SHORTEST_ROOM);
    if (!end)
        return -1;
    int length = format_float32(narrow, end);
    if (length) {
        out->size += length;
        return 0;
    }
    /* the writer's exact Python search (filterkit.arff.writer.float32_decimal) */
    PyGILState_STATE gil = PyGILState_Ensure();
    double decimal = -1.0;
    PyObject *writer = PyImport_ImportModule("filterkit.arff.writer");
    PyObject *found = writer ? PyObject_CallMethod(writer, "float32_decimal", "d", narrow) : NULL;
    if (found)
        decimal = PyFloat_AsDouble(found);
    int failed = PyErr_Occurred() != NULL;
    Py_XDECREF(found);
    Py_XDECREF(writer);
    PyGILState_Release(gil);
    if (failed)
        return -1;
    return output_exact(out, decimal);
}

static int
output_number(Output *out, double value, NumberFormat format)
{
    if (format.float32)
        return output_float32(out, value);
    if (format.digits && format.digits < 17)
        return output_digits(out, value, format.digits);
    return output_exact(out, value);
}

/* The longest text of a number entry: a comma, a column index (20 digits), a space and
   a number (repr's longest is 24 characters; Infinity's 9). */
#define ENTRY_ROOM 48

/* What an entry's ``special`` flag says it is: a number, the next text, or a nominal value whose label
   the writer's Labels holds. */
enum { ENTRY_NUMBER, ENTRY_TEXT, ENTRY_LABEL };

/* Rows of entries, as format_rows receives them; each text as UTF-8 bytes. */
typedef struct {
    const int64_t *bounds;
    const int64_t *column;
    const double *value;
    const unsigned char *is_text; /* each entry's flag; NULL where kind_of_column gives them */
    const unsigned char *kind_of_column; /* by column (format_rows' by_column), or NULL */
    Py_ssize_t n_kinds;
    const char **text;
    const Py_ssize_t *text_size;
    Py_ssize_t rows;
    int sparse;
    NumberFormat numbers;
    const double *weight; /* each row's instance weight, or NULL for none */
    const Labels *labels; /* the nominal columns' labels, or NULL */
    const Py_ssize_t *label_of; /* each label entry's label in ``labels``, in order, worked out with the GIL */
    Py_ssize_t text_count, label_count;
} Rows;

/* What format_into returns for rows by column that are not as stored (a column not above the one before it, or
   beyond the flags, or a zero) or hold a value that is no label's code: the writer then makes the chunk so in numpy,
   duplicate columns summed, and the per-entry path formats it or names the bad value as it always did. */
#define NOT_AS_STORED (-2)

/* The label of ``code`` among column c's in ``known``, as numpy indexes the column's texts (its labels, then
   its missing value: the Python printer's): NaN is the last, a code is taken whole, and from -n to -1 counts
   back from the end.  -1 for a column without labels, -2 for a value that is no code. */
static inline Py_ssize_t
label_of_code(const Labels *known, int64_t c, double code)
{
    if (!known || c < 0 || c >= known->n_columns || known->count[c] < 1)
        return -1;
    Py_ssize_t n = known->count[c];
    if (code != code)
        return known->first[c] + n - 1;
    if (!(code > -(double)n - 1 && code < (double)n))
        return -2;
    Py_ssize_t whole = (Py_ssize_t)code;
    return known->first[c] + (whole < 0 ? n + whole : whole);
}

/* The decimal digits of a signed integer at ``at`` (what "%lld" gives); returns their end.
   Written from the right, two digits at a time. */
static inline char *
put_integer(char *at, long long number)
{
    unsigned long long magnitude = number < 0 ? 0ULL - (unsigned long long)number : (unsigned long long)number;
    if (number < 0)
        *at++ = '-';
    int length = 1;
    for (unsigned long long rest = magnitude; rest >= 10; rest /= 10)
        length++;
    char *end = at + length;
    while (magnitude >= 100) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * (magnitude % 100), 2);
        magnitude /= 100;
    }
    if (magnitude >= 10)
        memcpy(end - 2, digit_pairs + 2 * magnitude, 2);
    else
        end[-1] = (char)('0' + magnitude);
    return at + length;
}

/* Format every row into out; -1 if the text would pass out's capacity (never: format_rows
   sizes it) or Python's code, for the few numbers the compiled printers decline, fails.
   Runs without the GIL (that code takes it).  The punctuation, the column indices and the
   integral numbers and repr's text of the others in the exact format are written straight
   at a cursor: format_rows reserves ENTRY_ROOM for each entry and 3 bytes for each row,
   which they never pass (format_shortest's fixed-size copies may run up to 50 bytes past
   the cursor, within the SHORTEST_ROOM left after the last entry); the other formats'
   numbers, the numbers format_shortest declines and the texts go through the checked output_*. */
static int
format_into(Output *out, Rows in)
{
    Py_ssize_t next_text = 0, next_label = 0;
    int exact = !in.numbers.float32 && (!in.numbers.digits || in.numbers.digits == 17);
    for (Py_ssize_t r = 0; r < in.rows; r++) {
        char *at = out->data + out->size;
        if (in.sparse)
            *at++ = '{';
        int64_t previous = -1;
        for (int64_t k = in.bounds[r]; k < in.bounds[r + 1]; k++) {
            if (k > in.bounds[r])
                *at++ = ',';
            double value = in.value[k];
            int kind;
            if (in.kind_of_column) { /* the row as stored: its columns rise, no value is zero */
                int64_t c = in.column[k];
                if (c <= previous || c >= in.n_kinds || value == 0.0)
                    return NOT_AS_STORED;
                previous = c;
                kind = in.kind_of_column[c];
            } else {
                kind = in.is_text[k];
            }
            if (in.sparse) {
                at = put_integer(at, (long long)in.column[k]);
                *at++ = ' ';
            }
            if (kind == ENTRY_LABEL) { /* by column its label is found here; else found, and room made for it, by
                                          format_rows */
                Py_ssize_t label;
                if (in.kind_of_column) {
                    label = label_of_code(in.labels, in.column[k], value);
                    if (label < 0)
                        return NOT_AS_STORED;
                } else if (next_label < in.label_count) {
                    label = in.label_of[next_label++];
                } else {
                    return -1; /* a flag changed by another thread since format_rows counted them */
                }
                Py_ssize_t size = in.labels->start[label + 1] - in.labels->start[label];
                memcpy(at, in.labels->text + in.labels->start[label], size);
                at += size;
                continue;
            }
            /* (below 2^53 the cast is exact, and it needs no call to floor(), which x86-64's
               baseline instructions cannot inline); zero too, as "-0" for negative zero:
               format_shortest takes non-zero numbers only */
            if (!kind && exact && fabs(value) < 9007199254740992.0 && (double)(long long)value == value) {
                if (value == 0 && signbit(value))
                    *at++ = '-';
                at = put_integer(at, (long long)value);
                continue;
            }
            /* repr's text of any other finite number, also at the cursor (the room reserved
               for the entry, and SHORTEST_ROOM past the last, hold format_shortest's copies) */
            if (!kind && exact && isfinite(value)) {
                int length = format_shortest(value, at);
                if (length) {
                    at += length;
                    continue;
                }
            }
            out->size = at - out->data;
            if (kind == ENTRY_TEXT) {
                if (next_text >= in.text_count
                    || output_append(out, in.text[next_text], in.text_size[next_text]) < 0)
                    return -1;
                next_text++;
            } else if (output_number(out, value, in.numbers) < 0) {
                return -1;
            }
            at = out->data + out->size;
        }
        if (in.sparse)
            *at++ = '}';
        if (in.weight && in.weight[r] != 1.0) {
            memcpy(at, " {", 2);
            out->size = at + 2 - out->data;
            if (output_exact(out, in.weight[r]) < 0)
                return -1;
            at = out->data + out->size;
            *at++ = '}';
        }
        *at++ = '\n';
        out->size = at - out->data;
    }
    return 0;
}

/*
 * format_rows(indptr, columns, values, special, texts, sparse, digits=0, float32=False,
 *             into=None, weights=None, labels=None, by_column=False) -> bytes | int | None
 *
 * Row r holds entries indptr[r] .. indptr[r+1]-1 (int64); entry k is column columns[k]
 * (int64) with value values[k] (float64), written as special[k] (uint8) says: 0, the number;
 * 1, the next str of ``texts`` (strings, dates, labels, already quoted); 2, the text of
 * code values[k] among column columns[k]'s in ``labels`` (a Labels of each column's labels
 * in the order of their codes, as written, then its missing value, for NaN).  Sparse rows are written
 * "{c v,c v}", dense rows "v,v"; a row whose weight (float64, given ``weights``) is not 1
 * is followed by " {w}", w written exactly; each row ends with a newline.  UTF-8.  Numbers
 * are written as filterkit.arff.writer.format_numbers writes them with NumberFormat(digits
 * or None, float32).  The GIL is released while formatting, so another thread (the reader)
 * can run meanwhile.
 *
 * The text is never copied: it is written straight into the bytes object returned, or,
 * given a bytearray ``into``, into its start (the bytearray is grown when too small, never
 * shrunk, so a writer that passes the same one each time reuses its memory), and the
 * text's length is returned.  The earlier text in ``into`` is overwritten: pass it again
 * only once that text is written (growing it while a view of it is alive fails).
 *
 * by_column: a sparse chunk written as it is stored, checked as it is written: ``special`` holds a flag
 * for each column (0 or 2), ``texts`` is empty, and None is returned where a row's columns do not rise
 * strictly, a column is beyond the flags, a value is zero or a label column's value is no label's code
 * (the writer then makes the chunk so in numpy and formats it by entry, which names a bad code), or where
 * the labels' room, the longest label for each label column in each row, would pass the entries' own.
 * One pass over the entries instead of three (flags, counts, labels), each label found as it is
 * written: an identity rewrite of grain x100 took 6 % less CPU (0.02 s).
 */
PyObject *
format_rows(PyObject *self, PyObject *args)
{
    Py_buffer indptr, columns, values, special;
    PyObject *texts;
    int sparse;
    NumberFormat numbers = {0, 0};
    PyObject *into = Py_None;
    Py_buffer weights = {NULL};
    PyObject *labels = Py_None;
    int by_column = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*O!p|ipOz*Op", &indptr, &columns, &values, &special, &PyList_Type, &texts,
                          &sparse, &numbers.digits, &numbers.float32, &into, &weights, &labels, &by_column))
        return NULL;
    PyObject *result = NULL;
    Py_buffer held = {NULL};
    const char **text = NULL;
    Py_ssize_t *text_size = NULL, *label_of = NULL;
    unsigned char *kinds = NULL;
    Rows in = {.bounds = indptr.buf,
               .column = columns.buf,
               .value = values.buf,
               .is_text = by_column ? NULL : special.buf,
               .rows = indptr.len / (Py_ssize_t)sizeof(int64_t) - 1,
               .sparse = sparse,
               .numbers = numbers,
               .weight = weights.buf,
               .labels = labels == Py_None ? NULL : (const Labels *)labels};
    Py_ssize_t entries = values.len / (Py_ssize_t)sizeof(double);
    if (in.rows < 0 || (sparse && columns.len / (Py_ssize_t)sizeof(int64_t) != entries)
        || (!by_column && special.len != entries) || (by_column && (!sparse || PyList_GET_SIZE(texts)))
        || (in.rows >= 0 && (in.bounds[0] != 0 || in.bounds[in.rows] != entries))
        || (in.weight && weights.len != in.rows * (Py_ssize_t)sizeof(double))) {
        PyErr_SetString(PyExc_ValueError, "format_rows: inconsistent arrays");
        goto done;
    }
    for (Py_ssize_t row = 0; row < in.rows; row++) {
        if (in.bounds[row] > in.bounds[row + 1]) {
            PyErr_SetString(PyExc_ValueError, "format_rows: row bounds must not decrease");
            goto done;
        }
    }
    if (numbers.digits < 0 || numbers.digits > 17 || (numbers.digits && numbers.float32)) {
        PyErr_SetString(PyExc_ValueError, "format_rows: digits from 1 to 17, or float32, or neither");
        goto done;
    }
    if (into != Py_None && !PyByteArray_Check(into)) {
        PyErr_SetString(PyExc_TypeError, "format_rows: into must be a bytearray");
        goto done;
    }
    if (labels != Py_None && !PyObject_TypeCheck(labels, &LabelsType)) {
        PyErr_SetString(PyExc_TypeError, "format_rows: labels must be a Labels");
        goto done;
    }
    Py_ssize_t text_count = 0, label_count = 0, label_room = 0;
    if (by_column) {
        /* the flags copied, so that the count of label columns bounds each row's labels (its columns rise) */
        kinds = PyMem_Malloc(special.len + 1);
        if (!kinds) {
            PyErr_NoMemory();
            goto done;
        }
        memcpy(kinds, special.buf, special.len);
        Py_ssize_t label_columns = 0;
        for (Py_ssize_t c = 0; c < special.len; c++) {
            if (kinds[c] != ENTRY_NUMBER && kinds[c] != ENTRY_LABEL) {
                PyErr_SetString(PyExc_ValueError, "format_rows: by column, special flags are 0 or 2");
                goto done;
            }
            if (kinds[c] == ENTRY_LABEL && label_of_code(in.labels, c, 0.0) == -1) {
                PyErr_SetString(PyExc_ValueError, "format_rows: a label entry of a column without labels");
                goto done;
            }
            label_columns += kinds[c] == ENTRY_LABEL;
        }
        /* a label takes room of its own beyond its entry's: at most one a label column in a row (its columns rise),
           each at most the longest label; where that passes the entries' own room (long labels in many columns),
           None: the per-entry path, which sizes each label, wastes less */
        Py_ssize_t labels_bound = in.rows && label_columns > entries / in.rows ? entries : in.rows * label_columns;
        Py_ssize_t longest = label_columns ? in.labels->longest : 0;
        if (longest && labels_bound > entries * (Py_ssize_t)ENTRY_ROOM / longest) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        in.kind_of_column = kinds;
        in.n_kinds = special.len;
        label_room = labels_bound * longest;
    }
    /* the texts to take, and each label entry's label and the room for it (found here, with the GIL: format_into
       reads none of the arrays that chose them again) */
    for (Py_ssize_t k = 0; k < entries && !by_column; k++) {
        text_count += in.is_text[k] == ENTRY_TEXT;
        label_count += in.is_text[k] == ENTRY_LABEL;
        if (in.is_text[k] > ENTRY_LABEL) {
            PyErr_SetString(PyExc_ValueError, "format_rows: special flags are 0, 1 or 2");
            goto done;
        }
    }
    label_of = PyMem_Malloc((label_count + 1) * sizeof(*label_of));
    if (!label_of) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t found = 0; /* label_count again: another thread may have changed a flag since (numpy without the GIL) */
    for (Py_ssize_t k = 0; k < entries && found < label_count; k++) {
        if (in.is_text[k] != ENTRY_LABEL)
            continue;
        int64_t c = columns.len / (Py_ssize_t)sizeof(int64_t) == entries ? in.column[k] : -1;
        Py_ssize_t label = label_of_code(in.labels, c, in.value[k]);
        if (label == -1) {
            PyErr_SetString(PyExc_ValueError, "format_rows: a label entry of a column without labels");
            goto done;
        }
        if (label < 0) {
            PyErr_Format(PyExc_ValueError, "format_rows: a value of column %lld is no label's code", (long long)c);
            goto done;
        }
        label_of[found++] = label;
        label_room += in.labels->start[label + 1] - in.labels->start[label];
    }
    label_count = found;
    if (text_count > PyList_GET_SIZE(texts)) {
        PyErr_SetString(PyExc_ValueError, "format_rows: too few texts");
        goto done;
    }
    /* the texts' UTF-8 forms, cached in the str objects the list keeps alive */
    text = PyMem_Malloc((text_count + 1) * sizeof(*text));
    text_size = PyMem_Malloc((text_count + 1) * sizeof(*text_size));
    if (!text || !text_size) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t t = 0; t < text_count; t++) {
        text[t] = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(texts, t), &text_size[t]);
        if (!text[t])
            goto done;
    }
    in.text = text;
    in.text_size = text_size;
    in.text_count = text_count;
    in.label_of = label_of;
    in.label_count = label_count;
    /* room for the longest text each entry can take, so the buffer never grows (and is
       never copied) while formatting */
    Py_ssize_t room = (entries + (in.weight ? in.rows : 0)) * (Py_ssize_t)ENTRY_ROOM + in.rows * 3 + SHORTEST_ROOM
                      + label_room;
    for (Py_ssize_t t = 0; t < text_count; t++)
        room += text_size[t];
    Output out = {NULL, 0, room};
    if (into == Py_None) {
        /* a new bytes object nobody else holds yet, cut to the text's length at the end */
        result = PyBytes_FromStringAndSize(NULL, room);
        if (!result)
            goto done;
        out.data = PyBytes_AS_STRING(result);
    } else {
        /* the bytearray, held (so no other thread resizes it) while the GIL is released */
        if (PyByteArray_GET_SIZE(into) < room && PyByteArray_Resize(into, room) < 0)
            goto done;
        if (PyObject_GetBuffer(into, &held, PyBUF_WRITABLE) < 0)
            goto done;
        out.data = held.buf;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = format_into(&out, in);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        Py_CLEAR(result);
        if (status == NOT_AS_STORED)
            result = Py_NewRef(Py_None);
        else if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "format_rows: the text outgrew its bound");
        goto done;
    }
    if (into == Py_None)
        _PyBytes_Resize(&result, out.size); /* shrinks in place; NULL and an error if it fails */
    else
        result = PyLong_FromSsize_t(out.size);
done:
    if (held.obj)
        PyBuffer_Release(&held);
    PyMem_Free(text);
    PyMem_Free(text_size);
    PyMem_Free(label_of);
    PyMem_Free(kinds);
    PyBuffer_Release(&indptr);
    PyBuffer_Release(&columns);
    PyBuffer_Release(&values);
    PyBuffer_Release(&special);
    if (weights.obj)
        PyBuffer_Release(&weights);
    return result;
}
