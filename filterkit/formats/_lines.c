/*
 * The svmlight reader's and writer's inner loops (filterkit.formats.svmlight), and the CSV reader's
 * cutting of rows into values (filterkit.formats.csv).
 *
 * parse_svmlight reads a block of lines into CSR arrays (see its comment), each row as the
 * grammar of svmlight.py's module description says: a label, then INDEX:VALUE
 * pairs (an index of 1 to 18 digits), separated by spaces and tabs; a number as
 * load_svmlight_file reads it ([+-], digits with an optional point or a point and digits, an
 * optional exponent; or nan, inf, infinity in any case).  Numbers are converted as Python's
 * float() converts them (correctly rounded).  The loop runs without the GIL.
 *
 * csv_columns(rows, width, blanks) cuts CSV rows into their columns' values (see its comment).
 *
 * svmlight_text(text) turns the writer's sparse ARFF rows ("{0 LABEL,INDEX VALUE,...}\n", from
 * filterkit.arff._speedups.format_rows, so numbers are printed as everywhere else) into
 * svmlight rows ("LABEL INDEX:VALUE ...\n"), with a missing value ("?") as "nan".
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#define strtod_l _strtod_l
#define newlocale(mask, name, base) _create_locale(LC_NUMERIC, name)
#define LC_NUMERIC_MASK 0
typedef _locale_t locale_t;
#elif defined(__APPLE__)
#include <xlocale.h>
#endif

#include "../arff/numbers.h"

static locale_t c_numbers;

static int
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Whether the len bytes at s are the word (ASCII letters, any case). */
static int
is_word(const char *s, Py_ssize_t len, const char *word)
{
    Py_ssize_t n = (Py_ssize_t)strlen(word);
    if (len < n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != word[i])
            return 0;
    return 1;
}

/* The end of the number starting at s (before end); NULL if none starts there.  Its value in
   *value: digits and a point without an exponent by arff/numbers.h's exact_decimal when its
   exact case holds them; the rest by strtod, correctly rounded too (the bytes after a number
   are a space, a tab or the line's NUL). */
static const char *
read_number(const char *s, const char *end, double *value)
{
    const char *at = s;
    if (at < end && (*at == '+' || *at == '-'))
        at++;
    if (at < end && !is_digit(*at) && *at != '.') {
        if (is_word(at, end - at, "nan"))
            at += 3;
        else if (is_word(at, end - at, "inf"))
            at += is_word(at, end - at, "infinity") ? 8 : 3;
        else
            return NULL;
        *value = strtod_l(s, NULL, c_numbers);
        return at;
    }
    ShortDecimal decimal;
    at = scan_decimal(s, end, &decimal);
    if (!decimal.has_digit)
        return NULL;
    int exponent = 0;
    if (at < end && (*at == 'e' || *at == 'E')) {
        const char *e = at + 1;
        if (e < end && (*e == '+' || *e == '-'))
            e++;
        if (e < end && is_digit(*e)) {
            while (e < end && is_digit(*e))
                e++;
            at = e;
            exponent = 1;
        }
    }
    if (exponent || decimal.significant_digits > 15
        || !exact_decimal(decimal.significand, decimal.scale, decimal.negative, value))
        *value = strtod_l(s, NULL, c_numbers);
    return at;
}

/* A growing array of 8-byte items. */
typedef struct {
    char *data;
    Py_ssize_t size, capacity;
} Array;

static int
append(Array *array, const void *item)
{
    if (array->size == array->capacity) {
        Py_ssize_t capacity = array->capacity ? 2 * array->capacity : 1024;
        char *data = PyMem_RawRealloc(array->data, capacity * 8);
        if (!data)
            return -1;
        array->data = data;
        array->capacity = capacity;
    }
    memcpy(array->data + 8 * array->size++, item, 8);
    return 0;
}

/* The array as bytes, and its memory freed; NULL and an error if out of memory. */
static PyObject *
as_bytes(Array *array)
{
    PyObject *bytes = PyBytes_FromStringAndSize(array->data ? array->data : "", 8 * array->size);
    PyMem_RawFree(array->data);
    array->data = NULL;
    return bytes;
}

/* What parse_line finds; the three kinds of refused line are the module's constants of the same names. */
enum { ROW, NOT_A_ROW, NAN_LABEL, DESCENDING, NO_MEMORY };

typedef struct {
    Array label, label_start, label_length, indptr, index, value, line_of;
    int64_t before, after; /* the indices of a DESCENDING row */
} Parsed;

/* Parse one line (a row's text: stripped, without its comment) into out: ROW or what is wrong. */
static int
parse_line(const char *s, const char *end, const char *block, Parsed *out)
{
    const char *at = s;
    double label;
    at = read_number(at, end, &label);
    if (!at)
        return NOT_A_ROW;
    int64_t start = s - block, length = at - s, previous = -1;
    Py_ssize_t entries = out->index.size;
    for (;;) {
        const char *gap = at;
        while (at < end && (*at == ' ' || *at == '\t'))
            at++;
        if (at == end)
            break;
        if (at == gap)
            goto refused;
        const char *digits = at;
        int64_t index = 0;
        while (at < end && is_digit(*at) && at - digits < 18)
            index = index * 10 + (*at++ - '0');
        if (at == digits || at == end || *at != ':')
            goto refused;
        double value;
        const char *number_end = read_number(at + 1, end, &value);
        if (!number_end || (number_end < end && *number_end != ' ' && *number_end != '\t'))
            goto refused;
        at = number_end;
        if (index <= previous && out->before < 0) {
            out->before = previous;
            out->after = index;
        }
        previous = index;
        if (append(&out->index, &index) < 0 || append(&out->value, &value) < 0)
            return NO_MEMORY;
    }
    if (out->before >= 0) {
        out->index.size = out->value.size = entries;
        return label != label ? NAN_LABEL : DESCENDING;
    }
    if (label != label) {
        out->index.size = out->value.size = entries;
        return NAN_LABEL;
    }
    int64_t ends = out->index.size;
    return append(&out->label, &label) < 0 || append(&out->label_start, &start) < 0
                   || append(&out->label_length, &length) < 0 || append(&out->indptr, &ends) < 0
               ? NO_MEMORY
               : ROW;
refused:
    out->index.size = out->value.size = entries;
    out->before = -1;
    return NOT_A_ROW;
}

static int
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * parse_svmlight(block, start, rows, size, line_bytes) -> dict
 *
 * Reads the lines of block (each ending in "\n") from byte start, as the svmlight reader's
 * line loop did: each line's comment ("#" on) cut off, the rest stripped of ASCII white
 * space; blank lines skipped; the rest rows, until ``rows`` rows or rows of ``size`` bytes
 * (each row's text and a newline).  The dict: "stop", where it stopped; "lines", the lines it
 * read; "too_long", whether the next line is longer than line_bytes; "first", the offset of the
 * first row's line (-1: none); "held", the bytes of the rows' texts (each with a newline);
 * "error", None or a dict of what is wrong with a line, where reading stopped: "what"
 * (NOT_A_ROW, NAN_LABEL, or DESCENDING: index "after" after index "before"), "line" (the
 * how-manieth line read) and "text" (stripped, without comment).  The rows: "labels", bytes of
 * float64; "label_texts", a list of bytes; "indptr" and "indices" (as written), bytes of int64;
 * "values", bytes of float64; "line_of", bytes of int64, the number of lines before each row's.
 */
static PyObject *
parse_svmlight(PyObject *self, PyObject *args)
{
    Py_buffer in;
    Py_ssize_t at, rows, size, line_bytes;
    if (!PyArg_ParseTuple(args, "y*nnnn", &in, &at, &rows, &size, &line_bytes))
        return NULL;
    const char *block = in.buf, *block_end = block + in.len;
    Parsed out = {{0}};
    out.before = -1;
    int64_t zero = 0;
    Py_ssize_t seen = 0, first = -1, found = 0, held = 0;
    int too_long = 0, what = ROW;
    const char *text = NULL, *text_end = NULL;
    if (at < 0 || at > in.len || (in.len && block_end[-1] != '\n')) {
        PyBuffer_Release(&in);
        PyErr_SetString(PyExc_ValueError, "parse_svmlight: a block of whole lines");
        return NULL;
    }
    PyObject *result = NULL, *texts = NULL;
    if (append(&out.indptr, &zero) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS
    while (at < in.len && found < rows && held < size) {
        const char *line = block + at, *end = memchr(line, '\n', block_end - line);
        if (end - line > line_bytes) {
            too_long = 1;
            break;
        }
        const char *hash = memchr(line, '#', end - line);
        text = line;
        text_end = hash ? hash : end;
        while (text < text_end && is_space(*text))
            text++;
        while (text_end > text && is_space(text_end[-1]))
            text_end--;
        at = end + 1 - block;
        seen++;
        if (text == text_end)
            continue;
        if (first < 0)
            first = line - block;
        what = parse_line(text, text_end, block, &out);
        if (what != ROW)
            break;
        int64_t before = seen - 1;
        if (append(&out.line_of, &before) < 0) {
            what = NO_MEMORY;
            break;
        }
        found++;
        held += text_end - text + 1;
    }
    Py_END_ALLOW_THREADS
    if (what == NO_MEMORY) {
        PyErr_NoMemory();
        goto done;
    }
    texts = PyList_New(out.label_start.size);
    if (!texts)
        goto done;
    for (Py_ssize_t r = 0; r < out.label_start.size; r++) {
        int64_t *start = (int64_t *)out.label_start.data, *length = (int64_t *)out.label_length.data;
        PyObject *label = PyBytes_FromStringAndSize(block + start[r], length[r]);
        if (!label)
            goto done;
        PyList_SET_ITEM(texts, r, label);
    }
    PyObject *error = Py_None;
    if (what != ROW)
        error = Py_BuildValue("{s:n,s:n,s:y#,s:L,s:L}", "what", (Py_ssize_t)what, "line", seen, "text", text,
                              (Py_ssize_t)(text_end - text), "before", (long long)out.before, "after",
                              (long long)out.after);
    else
        Py_INCREF(error);
    if (!error)
        goto done;
    result = Py_BuildValue("{s:n,s:n,s:n,s:N,s:n,s:N,s:N,s:O,s:N,s:N,s:N,s:N}", "stop", at, "lines", seen, "held", held,
                           "too_long", PyBool_FromLong(too_long), "first", first, "error", error, "labels",
                           as_bytes(&out.label), "label_texts", texts, "indptr", as_bytes(&out.indptr), "indices",
                           as_bytes(&out.index), "values", as_bytes(&out.value), "line_of", as_bytes(&out.line_of));
done:
    Py_XDECREF(texts);
    PyMem_RawFree(out.label.data);
    PyMem_RawFree(out.label_start.data);
    PyMem_RawFree(out.label_length.data);
    PyMem_RawFree(out.indptr.data);
    PyMem_RawFree(out.index.data);
    PyMem_RawFree(out.value.data);
    PyMem_RawFree(out.line_of.data);
    PyBuffer_Release(&in);
    return result;
}

/* svmlight_text(text) -> bytes: see the module's comment. */
static PyObject *
svmlight_text(PyObject *self, PyObject *args)
{
    Py_buffer in;
    if (!PyArg_Parse(args, "y*", &in))
        return NULL;
    Py_ssize_t length = in.len;
    const char *s = in.buf, *end = s + length;
    Py_ssize_t missing = 0;
    for (const char *c = s; (c = memchr(c, '?', end - c)); c++)
        missing++;
    PyObject *result = PyBytes_FromStringAndSize(NULL, length + 2 * missing);
    if (!result) {
        PyBuffer_Release(&in);
        return NULL;
    }
    char *at = PyBytes_AS_STRING(result);
    int malformed = 0;
    Py_BEGIN_ALLOW_THREADS
    /* every scan stops at end: a row not of the writer's form is refused, never read past */
    while (s < end && !malformed) {
        const char *space = memchr(s, ' ', end - s);
        if (!space) {
            malformed = 1;
            break;
        }
        s = space + 1; /* past "{0 " */
        while (s < end && *s != ',' && *s != '}')
            *at++ = *s++;
        while (s < end && *s == ',') {
            *at++ = ' ';
            for (s++; s < end && *s != ' '; s++)
                *at++ = *s;
            if (s >= end)
                break;
            *at++ = ':';
            if (end - s > 2 && s[1] == '?' && (s[2] == ',' || s[2] == '}')) {
                memcpy(at, "nan", 3);
                at += 3;
                s += 2;
            } else {
                for (s++; s < end && *s != ',' && *s != '}'; s++)
                    *at++ = *s;
            }
        }
        if (end - s < 2 || s[0] != '}' || s[1] != '\n') {
            malformed = 1;
            break;
        }
        *at++ = '\n';
        s += 2; /* "}\n" */
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&in);
    if (malformed) {
        Py_DECREF(result);
        PyErr_SetString(PyExc_ValueError, "svmlight_text: a row is not \"{0 LABEL,INDEX VALUE,...}\\n\"");
        return NULL;
    }
    _PyBytes_Resize(&result, at - PyBytes_AS_STRING(result));
    return result;
}

/* One value of a CSV row, from s (before end): its text [*text, *text_end) (a double-quoted one without its
   quotes, its "" still doubled: *doubled says whether it holds one), whether it was quoted, and where the value
   after it starts (*more: whether a comma says there is one).  NULL where the Python reader must read the row:
   a single-quoted value, or a double-quoted one that does not end the value (csv.py's _fields then says what
   is wrong). */
static const char *
csv_value(const char *s, const char *end, const char **text, const char **text_end, int *quoted, int *doubled,
          int *more)
{
    const char *q = s;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    *doubled = 0;
    if (q < end && *q == '\'')
        return NULL;
    if (q < end && *q == '"') {
        const char *c = q + 1;
        for (;;) {
            c = memchr(c, '"', end - c);
            if (!c)
                return NULL;
            if (c + 1 < end && c[1] == '"') {
                *doubled = 1;
                c += 2;
                continue;
            }
            break;
        }
        *text = q + 1;
        *text_end = c;
        *quoted = 1;
        const char *after = c + 1;
        while (after < end && (*after == ' ' || *after == '\t'))
            after++;
        *more = after < end;
        if (after == end)
            return end;
        return *after == ',' ? after + 1 : NULL;
    }
    const char *comma = memchr(s, ',', end - s);
    *text = s;
    *text_end = comma ? comma : end;
    *quoted = 0;
    *more = comma != NULL;
    return comma ? comma + 1 : end;
}

/* Whether an unquoted value is missing: empty or "?" once the blanks (a 256-byte table) are stripped. */
static int
csv_missing(const char *s, const char *end, const char *blank)
{
    while (s < end && blank[(unsigned char)*s])
        s++;
    while (end > s && blank[(unsigned char)end[-1]])
        end--;
    return s == end || (end - s == 1 && *s == '?');
}

/* The text of a value as str: a quoted one's "" read as "; NULL (no exception) when it is not UTF-8. */
static PyObject *
csv_text(const char *text, const char *text_end, int doubled)
{
    PyObject *value;
    if (!doubled) {
        value = PyUnicode_DecodeUTF8(text, text_end - text, NULL);
    } else {
        char *undoubled = PyMem_Malloc(text_end - text + 1);
        if (!undoubled)
            return PyErr_NoMemory();
        Py_ssize_t length = 0;
        for (const char *c = text; c < text_end; c++) {
            undoubled[length++] = *c;
            if (*c == '"')
                c++;
        }
        value = PyUnicode_DecodeUTF8(undoubled, length, NULL);
        PyMem_Free(undoubled);
    }
    if (!value && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        PyErr_Clear();
    return value;
}

/*
 * csv_columns(rows, width, blanks) -> (columns, declined): the CSV rows (a list of bytes, each a whole row,
 * a quoted value's line ends in it) cut into their values as csv.py's _fields cuts them: ``width`` lists,
 * one a column, of each row's value as str, None where it is missing (unquoted and, its ``blanks``
 * stripped, empty or "?") or where the row is declined.  ``declined`` lists the rows the Python reader
 * must cut: one of another number of values, a single-quoted value, a double quote that does not end
 * its value, or bytes that are not UTF-8 (each of which it reads as it does, or names the error of).
 */
static PyObject *
csv_columns(PyObject *self, PyObject *args)
{
    PyObject *rows;
    Py_ssize_t width;
    Py_buffer blanks;
    if (!PyArg_ParseTuple(args, "O!ny*", &PyList_Type, &rows, &width, &blanks))
        return NULL;
    char blank[256] = {0};
    for (Py_ssize_t i = 0; i < blanks.len; i++)
        blank[((unsigned char *)blanks.buf)[i]] = 1;
    PyBuffer_Release(&blanks);
    Py_ssize_t n_rows = PyList_GET_SIZE(rows);
    PyObject *columns = PyList_New(width > 0 ? width : 0), *declined = PyList_New(0), *values = NULL;
    if (!columns || !declined || width <= 0)
        goto failed;
    for (Py_ssize_t k = 0; k < width; k++) {
        PyObject *column = PyList_New(n_rows);
        if (!column)
            goto failed;
        for (Py_ssize_t r = 0; r < n_rows; r++) {
            Py_INCREF(Py_None);
            PyList_SET_ITEM(column, r, Py_None);
        }
        PyList_SET_ITEM(columns, k, column);
    }
    values = PyList_New(width);
    if (!values)
        goto failed;
    for (Py_ssize_t r = 0; r < n_rows; r++) {
        PyObject *row = PyList_GET_ITEM(rows, r);
        if (!PyBytes_Check(row)) {
            PyErr_SetString(PyExc_TypeError, "csv_columns: rows of bytes");
            goto failed;
        }
        const char *s = PyBytes_AS_STRING(row), *end = s + PyBytes_GET_SIZE(row);
        Py_ssize_t found = 0;
        int refused = 0;
        for (const char *at = s;;) {
            const char *text, *text_end;
            int quoted, doubled, more;
            const char *next = csv_value(at, end, &text, &text_end, &quoted, &doubled, &more);
            if (!next || found == width) {
                refused = 1;
                break;
            }
            PyObject *value = Py_None;
            if (quoted || !csv_missing(text, text_end, blank)) {
                value = csv_text(text, text_end, doubled);
                if (!value) {
                    if (PyErr_Occurred())
                        goto failed;
                    refused = 1;
                    break;
                }
            } else {
                Py_INCREF(value);
            }
            Py_XSETREF(PyList_GET_ITEM(values, found), value);
            found++;
            if (!more)
                break;
            at = next;
        }
        if (refused || found != width) {
            PyObject *position = PyLong_FromSsize_t(r);
            if (!position || PyList_Append(declined, position) < 0) {
                Py_XDECREF(position);
                goto failed;
            }
            Py_DECREF(position);
            continue;
        }
        for (Py_ssize_t k = 0; k < width; k++) {
            PyObject *value = PyList_GET_ITEM(values, k);
            Py_INCREF(value);
            Py_SETREF(PyList_GET_ITEM(PyList_GET_ITEM(columns, k), r), value);
        }
    }
    Py_DECREF(values);
    return Py_BuildValue("(NN)", columns, declined);
failed:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "csv_columns: a width of at least 1");
    Py_XDECREF(values);
    Py_XDECREF(columns);
    Py_XDECREF(declined);
    return NULL;
}

static PyMethodDef methods[] = {
    {"parse_svmlight", parse_svmlight, METH_VARARGS, "Parse svmlight data lines into CSR arrays."},
    {"svmlight_text", svmlight_text, METH_O, "Turn the writer's sparse ARFF rows into svmlight rows."},
    {"csv_columns", csv_columns, METH_VARARGS, "Cut CSV rows into their columns' values."},
    {NULL, NULL, 0, NULL},
};

/* The interface number filterkit/kernels.py (INTERFACES) expects: bump both whenever a function's arguments or
   results change, so that a module built from older source is refused with one error line instead of misbehaving. */
#define INTERFACE 3

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__lines(void)
{
    c_numbers = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c_numbers)
        return PyErr_NoMemory();
    PyObject *created = PyModule_Create(&module);
    if (created != NULL
        && (PyModule_AddIntConstant(created, "INTERFACE", INTERFACE) < 0
            || PyModule_AddIntConstant(created, "NOT_A_ROW", NOT_A_ROW) < 0
            || PyModule_AddIntConstant(created, "NAN_LABEL", NAN_LABEL) < 0
            || PyModule_AddIntConstant(created, "DESCENDING", DESCENDING) < 0))
        Py_CLEAR(created);
    return created;
}
