/*
 * The svmlight reader's and writer's inner loops (filterkit.formats.svmlight).
 *
 * parse_svmlight(lines) reads data lines (comments removed, stripped) into CSR arrays, each
 * line as the grammar of svmlight.py's module description says: a label, then INDEX:VALUE
 * pairs (an index of 1 to 18 digits), separated by spaces and tabs; a number as
 * load_svmlight_file reads it ([+-], digits with an optional point or a point and digits, an
 * optional exponent; or nan, inf, infinity in any case).  Numbers are converted as Python's
 * float() converts them (correctly rounded).  The loop runs without the GIL.
 *
 * svmlight_text(text, length) turns the first ``length`` bytes of the writer's sparse ARFF
 * rows ("{0 LABEL,INDEX VALUE,...}\n", from filterkit.arff._speedups.format_rows, so numbers
 * are printed as everywhere else) into svmlight rows ("LABEL INDEX:VALUE ...\n"), with a
 * missing value ("?") as "nan".
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

static locale_t c_numbers;

static const double exact_powers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

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
   *value: digits and a point with at most 15 digits in all and no exponent are exact as
   integer / power of ten (both exact, one correctly rounded division); the rest go to strtod,
   correctly rounded too (the bytes after a number are a space, a tab or the line's NUL). */
static const char *
read_number(const char *s, const char *end, double *value)
{
    const char *at = s;
    int negative = at < end && *at == '-';
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
    uint64_t whole = 0;
    int digits = 0, fraction = -1;
    const char *first = at;
    for (; at < end && is_digit(*at); at++, digits++)
        whole = whole * 10 + (uint64_t)(*at - '0') * (digits < 19);
    if (at < end && *at == '.') {
        if (at == first && !(at + 1 < end && is_digit(at[1])))
            return NULL;
        fraction = 0;
        for (at++; at < end && is_digit(*at); at++, digits++, fraction++)
            whole = whole * 10 + (uint64_t)(*at - '0') * (digits < 19);
    }
    if (at == first)
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
    if (!exponent && digits <= 15) {
        double magnitude = (double)whole / exact_powers[fraction > 0 ? fraction : 0];
        *value = negative ? -magnitude : magnitude;
    } else {
        *value = strtod_l(s, NULL, c_numbers);
    }
    return at;
}

typedef struct {
    double *label;
    Py_ssize_t *label_start, *label_end;
    int64_t *indptr, *index;
    double *value;
    Py_ssize_t entries;
} Parsed;

/* Parse one line into out; 0, or -1 where it is not an svmlight row. */
static int
parse_line(const char *s, Py_ssize_t size, Py_ssize_t row, Parsed *out)
{
    const char *at = s, *end = s + size;
    while (at < end && (*at == ' ' || *at == '\t'))
        at++;
    out->label_start[row] = at - s;
    at = read_number(at, end, &out->label[row]);
    if (!at)
        return -1;
    out->label_end[row] = at - s;
    for (;;) {
        const char *gap = at;
        while (at < end && (*at == ' ' || *at == '\t'))
            at++;
        if (at == end)
            return 0;
        if (at == gap)
            return -1;
        const char *digits = at;
        int64_t index = 0;
        while (at < end && is_digit(*at) && at - digits < 18)
            index = index * 10 + (*at++ - '0');
        if (at == digits || at == end || *at != ':')
            return -1;
        double value;
        const char *number_end = read_number(at + 1, end, &value);
        if (!number_end || (number_end < end && *number_end != ' ' && *number_end != '\t'))
            return -1;
        at = number_end;
        out->index[out->entries] = index;
        out->value[out->entries++] = value;
    }
}

/*
 * parse_svmlight(lines: list[bytes]) -> (bad, labels, label_texts, indptr, indices, values)
 *
 * bad is the position of the first line that is not a row (-1: none; then the other items
 * hold the rows: label_texts a list of each label as written, the others bytes of float64
 * labels, int64 indptr and indices as written, float64 values); with bad >= 0 they are None.
 */
static PyObject *
parse_svmlight(PyObject *self, PyObject *lines)
{
    if (!PyList_Check(lines)) {
        PyErr_SetString(PyExc_TypeError, "parse_svmlight: a list of bytes");
        return NULL;
    }
    Py_ssize_t rows = PyList_GET_SIZE(lines), colons = 0;
    const char **text = PyMem_Malloc((rows + 1) * sizeof(*text));
    Py_ssize_t *size = PyMem_Malloc((rows + 1) * sizeof(*size));
    Py_ssize_t *spans = PyMem_Malloc((2 * rows + 1) * sizeof(*spans));
    PyObject *labels = NULL, *indptr = NULL, *indices = NULL, *values = NULL, *texts = NULL, *result = NULL;
    if (!text || !size || !spans) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t r = 0; r < rows; r++) {
        PyObject *line = PyList_GET_ITEM(lines, r);
        if (!PyBytes_Check(line)) {
            PyErr_SetString(PyExc_TypeError, "parse_svmlight: a list of bytes");
            goto done;
        }
        text[r] = PyBytes_AS_STRING(line);
        size[r] = PyBytes_GET_SIZE(line);
        for (const char *c = text[r]; (c = memchr(c, ':', text[r] + size[r] - c)); c++)
            colons++;
    }
    labels = PyBytes_FromStringAndSize(NULL, rows * (Py_ssize_t)sizeof(double));
    indptr = PyBytes_FromStringAndSize(NULL, (rows + 1) * (Py_ssize_t)sizeof(int64_t));
    indices = PyBytes_FromStringAndSize(NULL, colons * (Py_ssize_t)sizeof(int64_t));
    values = PyBytes_FromStringAndSize(NULL, colons * (Py_ssize_t)sizeof(double));
    if (!labels || !indptr || !indices || !values)
        goto done;
    Parsed out = {(double *)PyBytes_AS_STRING(labels),
                  spans,
                  spans + rows,
                  (int64_t *)PyBytes_AS_STRING(indptr),
                  (int64_t *)PyBytes_AS_STRING(indices),
                  (double *)PyBytes_AS_STRING(values),
                  0};
    Py_ssize_t bad = -1;
    Py_BEGIN_ALLOW_THREADS
    out.indptr[0] = 0;
    for (Py_ssize_t r = 0; r < rows && bad < 0; r++) {
        if (parse_line(text[r], size[r], r, &out) < 0)
            bad = r;
        out.indptr[r + 1] = out.entries;
    }
    Py_END_ALLOW_THREADS
    if (bad >= 0) {
        result = Py_BuildValue("nOOOOO", bad, Py_None, Py_None, Py_None, Py_None, Py_None);
        goto done;
    }
    texts = PyList_New(rows);
    if (!texts)
        goto done;
    for (Py_ssize_t r = 0; r < rows; r++) {
        PyObject *label = PyBytes_FromStringAndSize(text[r] + out.label_start[r], out.label_end[r] - out.label_start[r]);
        if (!label)
            goto done;
        PyList_SET_ITEM(texts, r, label);
    }
    if (_PyBytes_Resize(&indices, out.entries * (Py_ssize_t)sizeof(int64_t)) < 0
        || _PyBytes_Resize(&values, out.entries * (Py_ssize_t)sizeof(double)) < 0)
        goto done;
    result = Py_BuildValue("nOOOOO", bad, labels, texts, indptr, indices, values);
done:
    Py_XDECREF(labels);
    Py_XDECREF(texts);
    Py_XDECREF(indptr);
    Py_XDECREF(indices);
    Py_XDECREF(values);
    PyMem_Free(text);
    PyMem_Free(size);
    PyMem_Free(spans);
    return result;
}

/* svmlight_text(text, length) -> bytes: see the module's comment. */
static PyObject *
svmlight_text(PyObject *self, PyObject *args)
{
    Py_buffer in;
    Py_ssize_t length;
    if (!PyArg_ParseTuple(args, "y*n", &in, &length))
        return NULL;
    if (length < 0 || length > in.len) {
        PyBuffer_Release(&in);
        PyErr_SetString(PyExc_ValueError, "svmlight_text: length outside the text");
        return NULL;
    }
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
    Py_BEGIN_ALLOW_THREADS
    while (s < end) {
        s = memchr(s, ' ', end - s) + 1; /* past "{0 " */
        while (*s != ',' && *s != '}')
            *at++ = *s++;
        while (*s == ',') {
            *at++ = ' ';
            for (s++; *s != ' '; s++)
                *at++ = *s;
            *at++ = ':';
            if (s[1] == '?' && (s[2] == ',' || s[2] == '}')) {
                memcpy(at, "nan", 3);
                at += 3;
                s += 2;
            } else {
                for (s++; *s != ',' && *s != '}'; s++)
                    *at++ = *s;
            }
        }
        *at++ = '\n';
        s += 2; /* "}\n" */
    }
    Py_END_ALLOW_THREADS
    _PyBytes_Resize(&result, at - PyBytes_AS_STRING(result));
    PyBuffer_Release(&in);
    return result;
}

static PyMethodDef methods[] = {
    {"parse_svmlight", parse_svmlight, METH_O, "Parse svmlight data lines into CSR arrays."},
    {"svmlight_text", svmlight_text, METH_VARARGS, "Turn the writer's sparse ARFF rows into svmlight rows."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__lines(void)
{
    c_numbers = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c_numbers)
        return PyErr_NoMemory();
    return PyModule_Create(&module);
}
