/*
 * The keyed hash of filterkit's compiled hash tables (_words.c's vocabulary, _speedups.c's labels), and what
 * their lookups share.  Each module including it has a key of its own.
 */
#ifndef FILTERKIT_KEYED_HASH_H
#define FILTERKIT_KEYED_HASH_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

/* SipHash-1-3 (Aumasson and Bernstein; CPython's string hash) keyed by a random key that each module including
 * this draws when it is loaded (draw_hash_key): words or labels crafted to share a table slot under one key
 * share it under another only by chance, so no input makes the linear probing quadratic (an unkeyed FNV-1a
 * let 320,000 crafted words take 200 times the time of random ones).  What a table gives back depends on its keys alone, never on the hash. */
static uint64_t hash_key[2];

#define ROTATE(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define HALF_ROUND(a, b, c, d, s, t) \
    a += b;                          \
    c += d;                          \
    b = ROTATE(b, s) ^ a;            \
    d = ROTATE(d, t) ^ c;            \
    a = ROTATE(a, 32);
#define SIP_ROUND(v0, v1, v2, v3)            \
    HALF_ROUND(v0, v1, v2, v3, 13, 16);      \
    HALF_ROUND(v2, v1, v0, v3, 17, 21);

static uint64_t
hash_of(const char *bytes, Py_ssize_t length)
{
    uint64_t v0 = hash_key[0] ^ 0x736f6d6570736575ULL, v1 = hash_key[1] ^ 0x646f72616e646f6dULL;
    uint64_t v2 = hash_key[0] ^ 0x6c7967656e657261ULL, v3 = hash_key[1] ^ 0x7465646279746573ULL;
    uint64_t last = (uint64_t)length << 56;
    Py_ssize_t whole = length & ~(Py_ssize_t)7;
    for (Py_ssize_t i = 0; i < whole; i += 8) {
        uint64_t word;
        memcpy(&word, bytes + i, 8);
        v3 ^= word;
        SIP_ROUND(v0, v1, v2, v3);
        v0 ^= word;
    }
    for (Py_ssize_t i = whole; i < length; i++) /* the last bytes little-endian, below the length's byte */
        last |= (uint64_t)(unsigned char)bytes[i] << (8 * (i - whole));
    v3 ^= last;
    SIP_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    return (v0 ^ v1) ^ (v2 ^ v3);
}

/* Whether two runs of ``length`` bytes are equal, eight at a time (tokens are short: a call to memcmp
 * cost more than the comparing). */
static int
same_bytes(const char *a, const char *b, Py_ssize_t length)
{
    for (; length >= 8; a += 8, b += 8, length -= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return 0;
    }
    while (length-- > 0)
        if (*a++ != *b++)
            return 0;
    return 1;
}

/* The hash's key: 16 bytes of os.urandom. */
static int
draw_hash_key(void)
{
    PyObject *os = PyImport_ImportModule("os");
    PyObject *drawn = os == NULL ? NULL : PyObject_CallMethod(os, "urandom", "n", (Py_ssize_t)sizeof(hash_key));
    Py_XDECREF(os);
    if (drawn == NULL)
        return 0;
    int ok = PyBytes_Check(drawn) && PyBytes_GET_SIZE(drawn) == (Py_ssize_t)sizeof(hash_key);
    if (ok)
        memcpy(hash_key, PyBytes_AS_STRING(drawn), sizeof(hash_key));
    else
        PyErr_SetString(PyExc_RuntimeError, "os.urandom returned no 16 bytes for a hash key");
    Py_DECREF(drawn);
    return ok;
}

#endif
