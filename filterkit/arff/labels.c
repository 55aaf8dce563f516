/*
 * Labels(columns, texts, values): the nominal columns' labels, made once per schema, part of
 * filterkit.arff._speedups.  ``columns`` (int64) and ``values`` (float64) hold each label's column and value,
 * ``texts`` (a list of bytes) its UTF-8 text.  The reader's table holds each label as it stands unquoted in a
 * row, with its code, and "?" with NaN, and ``codes`` looks a group's tokens up in it (reader._look_up), and
 * tokenize_plain and parse_sparse_rows look each quoted value of a nominal column up in it as they scan
 * (labels_find_quoted); the writer's holds each column's labels in the order of their codes, as it writes
 * them, then its missing value, and format_rows writes a nominal value from it.  The hash is keyed
 * (keyed_hash.h): a header's labels cannot be made to share slots.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../keyed_hash.h"
#include "labels.h"

static uint64_t
label_hash(int64_t column, const char *text, Py_ssize_t length)
{
    return hash_of(text, length) ^ ((uint64_t)column * 0x9e3779b97f4a7c15ULL);
}

/* The label of column ``column`` whose text is ``text``, -1 when there is none; *slot is where it is, or
   the empty slot where it would go. */
static Py_ssize_t
find_label(const Labels *self, int64_t column, const char *text, Py_ssize_t length, uint64_t hash, Py_ssize_t *slot)
{
    for (Py_ssize_t i = (Py_ssize_t)(hash & (uint64_t)self->mask);; i = (i + 1) & self->mask) {
        Py_ssize_t held = self->slots[i] - 1;
        *slot = i;
        if (held < 0)
            return -1;
        if (self->hash[held] == hash && self->column[held] == column
            && self->start[held + 1] - self->start[held] == length
            && same_bytes(self->text + self->start[held], text, length))
            return held;
    }
}

Py_ssize_t
labels_find_quoted(const Labels *self, int64_t column, const char *text, Py_ssize_t length)
{
    Py_ssize_t slot;
    if (column < 0 || column >= self->n_columns || self->first[column] < 0 || (length == 1 && text[0] == '?'))
        return -1;
    return find_label(self, column, text, length, label_hash(column, text, length), &slot);
}

static void
Labels_dealloc(Labels *self)
{
    PyMem_Free(self->column);
    PyMem_Free(self->value);
    PyMem_Free(self->start);
    PyMem_Free(self->text);
    PyMem_Free(self->hash);
    PyMem_Free(self->slots);
    PyMem_Free(self->first);
    PyMem_Free(self->count);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
fill(Labels *self, const int64_t *columns, PyObject *texts, const double *values)
{
    Py_ssize_t n = self->n, size = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *text = PyList_GET_ITEM(texts, k);
        if (!PyBytes_Check(text) || columns[k] < 0 || columns[k] > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "Labels: each text is bytes, each column from 0 to 2**31 - 1");
            return -1;
        }
        size += PyBytes_GET_SIZE(text);
        if (columns[k] >= self->n_columns)
            self->n_columns = columns[k] + 1;
    }
    Py_ssize_t slots = 8;
    while (slots < 2 * n)
        slots *= 2;
    self->mask = slots - 1;
    self->column = PyMem_Malloc((n + 1) * sizeof(int64_t));
    self->value = PyMem_Malloc((n + 1) * sizeof(double));
    self->start = PyMem_Malloc((n + 1) * sizeof(Py_ssize_t));
    self->text = PyMem_Malloc(size + 1);
    self->hash = PyMem_Malloc((n + 1) * sizeof(uint64_t));
    self->slots = PyMem_Calloc(slots, sizeof(Py_ssize_t));
    self->first = PyMem_Malloc((self->n_columns + 1) * sizeof(Py_ssize_t));
    self->count = PyMem_Calloc(self->n_columns + 1, sizeof(Py_ssize_t));
    if (!self->column || !self->value || !self->start || !self->text || !self->hash || !self->slots || !self->first
        || !self->count) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(self->column, columns, n * sizeof(int64_t));
    memcpy(self->value, values, n * sizeof(double));
    for (Py_ssize_t c = 0; c < self->n_columns; c++)
        self->first[c] = -1;
    self->start[0] = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *text = PyList_GET_ITEM(texts, k);
        Py_ssize_t length = PyBytes_GET_SIZE(text), slot;
        memcpy(self->text + self->start[k], PyBytes_AS_STRING(text), length);
        self->start[k + 1] = self->start[k] + length;
        if (length > self->longest)
            self->longest = length;
        int64_t c = columns[k];
        if (self->first[c] < 0)
            self->first[c] = k;
        if (self->first[c] + self->count[c] == k)
            self->count[c]++;
        self->hash[k] = label_hash(c, self->text + self->start[k], length);
        find_label(self, c, self->text + self->start[k], length, self->hash[k], &slot);
        self->slots[slot] = k + 1; /* a label given twice: the later one, as a dict keeps it */
    }
    return 0;
}

static PyObject *
Labels_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    Py_buffer columns, values;
    PyObject *texts;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Labels takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*O!y*", &columns, &PyList_Type, &texts, &values))
        return NULL;
    Labels *self = NULL;
    Py_ssize_t n = PyList_GET_SIZE(texts);
    if (columns.len != n * (Py_ssize_t)sizeof(int64_t) || values.len != n * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "Labels: an int64 column and a float64 value for each text");
        goto done;
    }
    self = (Labels *)type->tp_alloc(type, 0);
    if (self) {
        self->n = n;
        if (fill(self, columns.buf, texts, values.buf) < 0)
            Py_CLEAR(self);
    }
done:
    PyBuffer_Release(&columns);
    PyBuffer_Release(&values);
    return (PyObject *)self;
}

/*
 * codes(data, columns, starts, ends) -> bytearray | None
 *
 * The value of the label of column columns[k] whose text is data[starts[k]:ends[k]], for each k (float64;
 * columns, starts and ends int64), found without the GIL; None when one of them is no label.
 */
static PyObject *
Labels_codes(Labels *self, PyObject *args)
{
    Py_buffer data, columns, starts, ends;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &data, &columns, &starts, &ends))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = columns.len / (Py_ssize_t)sizeof(int64_t);
    if (columns.len % sizeof(int64_t) || starts.len != columns.len || ends.len != columns.len) {
        PyErr_SetString(PyExc_ValueError, "codes: as many int64 starts and ends as columns");
        goto done;
    }
    result = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (!result)
        goto done;
    const int64_t *column = columns.buf, *start = starts.buf, *end = ends.buf;
    const char *text = data.buf;
    double *code = (double *)PyByteArray_AS_STRING(result);
    int status = 0; /* 1: a token is no label; 2: a token outside the data */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n && !status; k++) {
        Py_ssize_t slot;
        if (start[k] < 0 || start[k] > end[k] || end[k] > data.len) {
            status = 2;
            break;
        }
        Py_ssize_t length = end[k] - start[k];
        Py_ssize_t label = find_label(self, column[k], text + start[k], length,
                                      label_hash(column[k], text + start[k], length), &slot);
        if (label < 0)
            status = 1;
        else
            code[k] = self->value[label];
    }
    Py_END_ALLOW_THREADS
    if (status) {
        Py_CLEAR(result);
        if (status == 1)
            result = Py_NewRef(Py_None);
        else
            PyErr_SetString(PyExc_ValueError, "codes: a token outside the data");
    }
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&columns);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    return result;
}

static PyMethodDef Labels_methods[] = {
    {"codes", (PyCFunction)Labels_codes, METH_VARARGS, "The value of each token's label; None when one is none."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject LabelsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "filterkit.arff._speedups.Labels",
    .tp_basicsize = sizeof(Labels),
    .tp_dealloc = (destructor)Labels_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Nominal columns' labels: a keyed hash table for the reader, the texts by code for the writer.",
    .tp_methods = Labels_methods,
    .tp_new = Labels_new,
};

int
labels_ready(void)
{
    return draw_hash_key() && PyType_Ready(&LabelsType) == 0;
}
