/*
 * The compiled tokenizer and counter of the ``words`` stage (plugins/words.py).
 *
 * ``Vocabulary`` numbers distinct tokens: a hash table of their UTF-8 bytes; the Python
 * strings of ``words`` (in the order of their numbers) are made only when it is read.
 * ``count`` cuts a chunk's documents into tokens as plugins/words.py's ``tokenizer`` does
 * (Weka's delimiters or ASCII letters, n-grams joined by one space and trimmed as Java
 * trims), lowercases them, leaves out stop words and returns each row's distinct token
 * numbers with their occurrences as CSR arrays: no Python object per token, and the GIL
 * released, so that two threads count at once.  ASCII documents are cut byte by byte; any other
 * is cut as UTF-8 (utf8_text.h): at the same ASCII delimiters (the bytes of a non-ASCII delimiter
 * marked), each token holding a byte past ASCII lowercased by code point with Python's own tables,
 * character n-grams counted by code point.  A stemmer (``stem``, Python) is called per token, cut
 * and lowercased here, with the GIL held for the whole count.  A text given as bytes that is not
 * UTF-8 (refused there) and, on Python 3.13 or later, any text that is not ASCII, go to the Python
 * ``fallback`` (with the GIL), which returns its final tokens.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyed_hash.h"
#include "ascii_bytes.h"
#include "utf8_text.h"

typedef struct {
    uint64_t hash;
    Py_ssize_t offset; /* of the token's bytes in ``text`` */
    Py_ssize_t length;
} Entry;

/* Its arrays are the raw allocator's: ``count`` reads and adds to them without the GIL. */
typedef struct {
    PyObject_HEAD
    Py_ssize_t *slots; /* entry number + 1, 0 for an empty slot; a power of two of them */
    Py_ssize_t n_slots;
    Entry *entries;
    Py_ssize_t n, allocated;
    char *text;
    Py_ssize_t text_used, text_allocated;
    PyObject *words; /* the first len(words) tokens as strings, made when ``words`` is asked for */
    int users;       /* ``count`` calls using it without the GIL: the number reading it, -1 for one adding */
} Vocabulary;

/* The number of the token, -1 when absent. */
static Py_ssize_t
find(Vocabulary *self, const char *bytes, Py_ssize_t length, uint64_t hash, Py_ssize_t *slot)
{
    Py_ssize_t mask = self->n_slots - 1;
    for (Py_ssize_t i = (Py_ssize_t)(hash & (uint64_t)mask);; i = (i + 1) & mask) {
        Py_ssize_t held = self->slots[i] - 1;
        if (held < 0) {
            *slot = i;
            return -1;
        }
        Entry *entry = &self->entries[held];
        if (entry->hash == hash && entry->length == length && same_bytes(self->text + entry->offset, bytes, length))
            return held;
    }
}

/* Room for ``needed`` items of ``size`` bytes, by doubling; 0 when out of memory (no exception is set:
 * the GIL may not be held, so the caller raises MemoryError once it is). */
static int
grow(void **array, Py_ssize_t *allocated, Py_ssize_t needed, size_t size)
{
    if (needed <= *allocated)
        return 1;
    Py_ssize_t count = *allocated ? *allocated : 64;
    while (count < needed)
        count *= 2;
    void *grown = PyMem_RawRealloc(*array, (size_t)count * size);
    if (grown == NULL)
        return 0;
    *array = grown;
    *allocated = count;
    return 1;
}

static int
rehash(Vocabulary *self)
{
    Py_ssize_t n_slots = self->n_slots * 2;
    Py_ssize_t *slots = PyMem_RawCalloc((size_t)n_slots, sizeof(Py_ssize_t));
    if (slots == NULL)
        return 0;
    for (Py_ssize_t k = 0; k < self->n; k++) {
        Py_ssize_t i = (Py_ssize_t)(self->entries[k].hash & (uint64_t)(n_slots - 1));
        while (slots[i])
            i = (i + 1) & (n_slots - 1);
        slots[i] = k + 1;
    }
    PyMem_RawFree(self->slots);
    self->slots = slots;
    self->n_slots = n_slots;
    return 1;
}

/* The number of the token whose bytes hash to ``hash``, a new one if absent and ``add``; -1 when absent
 * and not added, -2 when out of memory.  Makes no Python object: runs without the GIL. */
static Py_ssize_t
number(Vocabulary *self, const char *bytes, Py_ssize_t length, uint64_t hash, int add)
{
    Py_ssize_t slot;
    Py_ssize_t found = find(self, bytes, length, hash, &slot);
    if (found >= 0 || !add)
        return found;
    if (!grow((void **)&self->entries, &self->allocated, self->n + 1, sizeof(Entry)) ||
        !grow((void **)&self->text, &self->text_allocated, self->text_used + length + 1, 1))
        return -2;
    if (length > 0) /* an empty token's bytes may be NULL */
        memcpy(self->text + self->text_used, bytes, length);
    self->entries[self->n] = (Entry){hash, self->text_used, length};
    self->text_used += length;
    self->slots[slot] = ++self->n;
    if (self->n * 2 > self->n_slots && !rehash(self))
        return -2;
    return self->n - 1;
}

/* The number of a token whose bytes hash to ``hash``: its number in ``shared`` if that holds it (``shared`` only read,
 * so two threads may count with it at once), else its number in ``self`` (added if absent and ``add``) after
 * ``shared``'s; as :func:`number` with no ``shared``. */
static Py_ssize_t
number_after(Vocabulary *shared, Vocabulary *self, const char *bytes, Py_ssize_t length, uint64_t hash, int add)
{
    if (shared == NULL)
        return number(self, bytes, length, hash, add);
    Py_ssize_t slot, found = find(shared, bytes, length, hash, &slot);
    if (found >= 0)
        return found;
    found = number(self, bytes, length, hash, add);
    return found < 0 ? found : found + shared->n;
}

/* A token's column among ``n_columns`` (a power of two) as HashingVectorizer's: |h| mod n_columns of the
 * signed 32-bit hash h (|-2**31| is 2**31, as its special case gives for a power of two). */
static Py_ssize_t
column_of(const char *bytes, Py_ssize_t length, Py_ssize_t n_columns)
{
    uint32_t h = murmur3_32((const unsigned char *)bytes, length);
    uint32_t magnitude = h >> 31 ? 0u - h : h;
    return (Py_ssize_t)(magnitude & (uint32_t)(n_columns - 1));
}

/* The number of a string, added when absent and ``add``, or its column among ``n_columns`` if not 0; -2 on
 * an error, its exception set or not. */
static Py_ssize_t
number_of_string(Vocabulary *shared, Vocabulary *self, PyObject *word, int add, Py_ssize_t n_columns)
{
    if (!PyUnicode_Check(word)) {
        PyErr_Format(PyExc_TypeError, "a token is %.100s, not a string", Py_TYPE(word)->tp_name);
        return -2;
    }
    PyObject *encoded = PyUnicode_AsEncodedString(word, "utf-8", "surrogatepass");
    if (encoded == NULL)
        return -2;
    const char *bytes = PyBytes_AS_STRING(encoded);
    Py_ssize_t length = PyBytes_GET_SIZE(encoded);
    Py_ssize_t found = n_columns ? column_of(bytes, length, n_columns)
                                 : number_after(shared, self, bytes, length, hash_of(bytes, length), add);
    Py_DECREF(encoded);
    return found;
}

/* Take ``self`` for a call that adds to it (``add``) or reads it while the GIL is released: refused,
 * with RuntimeError, while another thread adds to it or, to add, while another reads it. */
static int
take(Vocabulary *self, int add)
{
    if (self->users < 0 || (add && self->users > 0)) {
        PyErr_SetString(PyExc_RuntimeError, "a words Vocabulary is in use by another thread");
        return 0;
    }
    self->users = add ? -1 : self->users + 1;
    return 1;
}

static void
give_back(Vocabulary *self)
{
    self->users = self->users < 0 ? 0 : self->users - 1;
}

/* The exception of a failed call: the one set, else MemoryError (``grow`` sets none). */
static PyObject *
failed(void)
{
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
}

static void
Vocabulary_dealloc(Vocabulary *self)
{
    PyMem_RawFree(self->slots);
    PyMem_RawFree(self->entries);
    PyMem_RawFree(self->text);
    Py_XDECREF(self->words);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Vocabulary_ids(Vocabulary *self, PyObject *words);

static PyObject *
Vocabulary_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *words = NULL;
    if (!PyArg_ParseTuple(args, "|O:Vocabulary", &words))
        return NULL;
    Vocabulary *self = (Vocabulary *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->n_slots = 64;
    self->slots = PyMem_RawCalloc(64, sizeof(Py_ssize_t));
    self->words = PyList_New(0);
    if (self->slots == NULL || self->words == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    if (words != NULL) {
        PyObject *ids = Vocabulary_ids(self, words);
        if (ids == NULL) {
            Py_DECREF(self);
            return NULL;
        }
        Py_DECREF(ids);
    }
    return (PyObject *)self;
}

/* ids(words): each word's number (int64 bytes), words not yet numbered added; ``words`` a sequence of
 * strings or a Vocabulary (its tokens in the order of their numbers, taken from their bytes and hashes:
 * no string made). */
static PyObject *
Vocabulary_ids(Vocabulary *self, PyObject *words)
{
    Vocabulary *other = PyObject_TypeCheck(words, Py_TYPE(self)) ? (Vocabulary *)words : NULL;
    PyObject *sequence = other != NULL ? NULL : PySequence_Fast(words, "words must be a sequence of strings");
    if ((other == NULL && sequence == NULL) || !take(self, 1)) {
        Py_XDECREF(sequence);
        return NULL;
    }
    if (other != NULL && !take(other, 0)) {
        give_back(self);
        return NULL;
    }
    Py_ssize_t n = other != NULL ? other->n : PySequence_Fast_GET_SIZE(sequence);
    PyObject *ids = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    for (Py_ssize_t k = 0; ids != NULL && k < n; k++) {
        Entry *entry = other != NULL ? &other->entries[k] : NULL;
        Py_ssize_t id = entry != NULL ? number(self, other->text + entry->offset, entry->length, entry->hash, 1)
                                      : number_of_string(NULL, self, PySequence_Fast_GET_ITEM(sequence, k), 1, 0);
        if (id < 0) {
            Py_CLEAR(ids);
            failed();
        }
        else
            ((int64_t *)PyBytes_AS_STRING(ids))[k] = id;
    }
    if (other != NULL)
        give_back(other);
    give_back(self);
    Py_XDECREF(sequence);
    return ids;
}

static Py_ssize_t
Vocabulary_length(Vocabulary *self)
{
    return self->n;
}

/* A list of the distinct tokens in the order of their numbers: a copy, so the vocabulary stays as it is. */
static PyObject *
Vocabulary_get_words(Vocabulary *self, void *unused)
{
    if (!take(self, 0))
        return NULL;
    for (Py_ssize_t k = PyList_GET_SIZE(self->words); k < self->n; k++) {
        PyObject *word = PyUnicode_DecodeUTF8(self->text + self->entries[k].offset, self->entries[k].length,
                                              "surrogatepass");
        if (word == NULL || PyList_Append(self->words, word) < 0) {
            Py_XDECREF(word);
            give_back(self);
            return NULL;
        }
        Py_DECREF(word);
    }
    give_back(self);
    return PyList_GetSlice(self->words, 0, self->n);
}

static PyObject *
Vocabulary_reduce(Vocabulary *self, PyObject *unused)
{
    PyObject *words = Vocabulary_get_words(self, NULL);
    PyObject *reduced = words == NULL ? NULL : Py_BuildValue("(O(O))", Py_TYPE(self), words);
    Py_XDECREF(words);
    return reduced;
}

typedef struct {
    int64_t id, count;
} Pair;

/* The most tokens looked up together (:func:`look_up_batch`), and the vocabulary slots from which they are. */
#define BATCH 32
#define BATCH_FROM_SLOTS ((Py_ssize_t)1 << 18)

/* A token waiting to be looked up: its bytes' place in the buffer of its batch, and their hash. */
typedef struct {
    Py_ssize_t offset, length;
    uint64_t hash;
} Waiting;

/* The settings of one ``count`` call and the rows it has made so far; its arrays are the raw allocator's. */
typedef struct {
    Vocabulary *vocabulary;
    Vocabulary *shared; /* with ``add``: a vocabulary only read, whose tokens ``vocabulary`` does not hold (NULL: none) */
    Py_ssize_t most; /* with ``add``, the most tokens ``vocabulary`` may hold */
    int full;        /* whether a token beyond ``most`` was met */
    int add, alphabetic, lowercase, ngram_min, ngram_max;
    int characters;        /* character n-grams of ngram_min to ngram_max within words (scikit-learn's char_wb) */
    Py_ssize_t n_columns;  /* hashing: a token's number is its column among these (MurmurHash3); 0 otherwise */
    unsigned char word_character[256]; /* 1 for a byte a token is made of (Weka's delimiters or letters); 0 for
                                          0xFF, which marks a non-ASCII delimiter's bytes */
    Py_UCS4 *wide_delimiters; /* the delimiters past ASCII, ascending */
    Py_ssize_t n_wide_delimiters;
    char key[256];                     /* each byte as the vocabulary holds it: lowercased, or as it is */
    Vocabulary *stopwords;
    PyObject *stem; /* a token's stem, or None for a stop word (called with the GIL); NULL: no stemmer */
    char *token, *lowered; /* scratch for one token */
    Py_ssize_t token_allocated, lowered_allocated;
    char *unicode, *marked; /* a string's UTF-8 bytes; a text with its non-ASCII delimiters marked */
    Py_ssize_t unicode_allocated, marked_allocated;
    Py_UCS4 *points; /* a token's or a word's code points */
    Py_ssize_t points_allocated;
    Py_ssize_t *offsets; /* where each code point of a padded word starts (character n-grams) */
    Py_ssize_t offsets_allocated;
    Py_ssize_t *starts, *ends; /* a document's words */
    Py_ssize_t words_allocated, ends_allocated;
    Pair *pairs; /* every row's (token number, occurrences), row after row; the current row's tokens */
    Py_ssize_t n_pairs, pairs_allocated, row_start;
    Py_ssize_t *pair_of; /* per token number, its pair's index if in the current row (>= row_start) */
    Py_ssize_t ids_allocated;
    uint64_t *held;  /* a bit per token number, while a row's pairs are put in order (else all 0) */
    Pair *ordered;   /* a row's pairs in order */
    Py_ssize_t held_allocated, ordered_allocated;
    Waiting waiting[BATCH]; /* a document's tokens not yet looked up, in order */
    int n_waiting;
} Counting;

/* Count one occurrence of token number ``id`` (-1: not in a vocabulary not added to; -2: an error) in
 * the current row; stop (``full``) at a number beyond ``most``: the bound holds while one long document
 * is counted, not only after it. */
static int
count_number(Counting *c, Py_ssize_t id)
{
    if (id == -1)
        return 1;
    if (id < -1)
        return 0;
    if (c->add && id >= c->most) {
        c->full = 1;
        return 0;
    }
    if (id >= c->ids_allocated) {
        Py_ssize_t before = c->ids_allocated;
        if (!grow((void **)&c->pair_of, &c->ids_allocated, id + 1, sizeof(Py_ssize_t)))
            return 0;
        for (Py_ssize_t k = before; k < c->ids_allocated; k++)
            c->pair_of[k] = -1;
    }
    Py_ssize_t held = c->pair_of[id]; /* earlier rows' pairs lie before row_start */
    if (held >= c->row_start && c->pairs[held].id == id) {
        c->pairs[held].count++;
        return 1;
    }
    if (!grow((void **)&c->pairs, &c->pairs_allocated, c->n_pairs + 1, sizeof(Pair)))
        return 0;
    c->pair_of[id] = c->n_pairs;
    c->pairs[c->n_pairs++] = (Pair){id, 1};
    return 1;
}

/* The vocabulary of more slots of those a count looks tokens up in (``shared`` first): the one whose slots a batch
 * fetches ahead, as most of its tokens are there. */
static Vocabulary *
larger_table(Counting *c)
{
    return c->shared != NULL && c->shared->n_slots >= c->vocabulary->n_slots ? c->shared : c->vocabulary;
}

/* Look up and count the waiting tokens, in order (the numbers a fit gives are those one at a time gives),
 * their bytes at ``base`` + offset.  The vocabulary's slots were fetched as each was queued, and their
 * entries are fetched here before the first is compared: a large vocabulary's lookup waited on those two loads,
 * token after token (four fifths of its time; Debian ×10's ``--ngrams 1-2`` now takes 0.88 of the CPU). */
static int
look_up_batch(Counting *c, const char *base)
{
    Vocabulary *largest = larger_table(c);
    Py_ssize_t mask = largest->n_slots - 1;
    for (int k = 0; k < c->n_waiting; k++) {
        Py_ssize_t held = largest->slots[c->waiting[k].hash & (uint64_t)mask] - 1;
        if (held >= 0)
            __builtin_prefetch(&largest->entries[held]);
    }
    int n = c->n_waiting;
    c->n_waiting = 0;
    for (int k = 0; k < n; k++) {
        Waiting *token = &c->waiting[k];
        if (!count_number(c, number_after(c->shared, c->vocabulary, base + token->offset, token->length, token->hash,
                                          c->add)))
            return 0;
    }
    return 1;
}

/* Queue a token for :func:`look_up_batch` (its bytes at ``base`` + ``offset``, where they stay until it is
 * looked up), looking up the batch first when it is full; its slot is fetched meanwhile.  A vocabulary of fewer
 * slots than ``BATCH_FROM_SLOTS`` (a few megabytes with its entries, in cache) is read at once: queueing cost 2 %
 * of Reuters ×50's ``--counts`` (a table only grows, so no token waits behind one counted at once). */
static int
wait_for_lookup(Counting *c, const char *base, Py_ssize_t offset, Py_ssize_t length, uint64_t hash)
{
    Vocabulary *largest = larger_table(c);
    if (largest->n_slots < BATCH_FROM_SLOTS)
        return count_number(c, number_after(c->shared, c->vocabulary, base + offset, length, hash, c->add));
    if (c->n_waiting == BATCH && !look_up_batch(c, base))
        return 0;
    __builtin_prefetch(&largest->slots[hash & (uint64_t)(largest->n_slots - 1)]);
    c->waiting[c->n_waiting++] = (Waiting){offset, length, hash};
    return 1;
}

/* A token's number: its column when hashing, else its number in the vocabulary (-1 if absent, not added). */
static Py_ssize_t
token_number(Counting *c, const char *token, Py_ssize_t length)
{
    return c->n_columns ? column_of(token, length, c->n_columns)
                        : number_after(c->shared, c->vocabulary, token, length, hash_of(token, length), c->add);
}

/* A token's ``length`` bytes of UTF-8 lowercased as ``str.lower`` lowercases them, into ``out`` (LOWERED_ROOM of
 * ``length``); the bytes written, -1 when out of memory. */
static Py_ssize_t
lowered_token(Counting *c, const char *token, Py_ssize_t length, char *out)
{
#if UNICODE_IN_C
    const unsigned char *bytes = (const unsigned char *)token;
    Py_ssize_t at = 0, written = 0;
    while (at < length) { /* ASCII and two-byte letters of one mapping, without a call */
        unsigned char lead = bytes[at];
        if (lead < 0x80) {
            out[written++] = (char)(lead >= 'A' && lead <= 'Z' ? lead + 32 : lead);
            at++;
            continue;
        }
        Py_UCS4 mapped = lead < 0xE0 ? two_byte_lowercase[(lead & 0x1Fu) << 6 | (bytes[at + 1] & 0x3Fu)] : 0;
        if (mapped == 0)
            break;
        written += write_code_point(mapped, out + written);
        at += 2;
    }
    if (at == length)
        return written;
    if (!grow((void **)&c->points, &c->points_allocated, length, sizeof(Py_UCS4)))
        return -1;
    Py_ssize_t n = 0;
    for (Py_ssize_t at = 0; at < length;)
        c->points[n++] = read_code_point((const unsigned char *)token, &at);
    return write_lowered(c->points, n, out);
#else
    for (Py_ssize_t i = 0; i < length; i++)
        out[i] = (char)(token[i] >= 'A' && token[i] <= 'Z' ? token[i] + 32 : token[i]);
    return length;
#endif
}

/* The number of a token (UTF-8, surrogates as surrogatepass writes them) once stemmed by c->stem (with the GIL), as
 * :func:`number_of_string` numbers a string; -1 for a stop word (``stem`` gives None). */
static Py_ssize_t
stemmed_number(Counting *c, const char *token, Py_ssize_t length)
{
    PyObject *word = PyUnicode_DecodeUTF8(token, length, "surrogatepass");
    PyObject *stemmed = word == NULL ? NULL : PyObject_CallOneArg(c->stem, word);
    Py_XDECREF(word);
    if (stemmed == NULL)
        return -2;
    Py_ssize_t found = stemmed == Py_None ? -1 : number_of_string(c->shared, c->vocabulary, stemmed, c->add, c->n_columns);
    Py_DECREF(stemmed);
    return found;
}

/* One token (the UTF-8 bytes token[0:length]): lowercased, left out if a stop word, counted; or, with a stemmer,
 * lowercased and handed to it (which leaves out stop words once stemmed, as the Python tokenizer does). */
static int
count_token(Counting *c, const char *token, Py_ssize_t length)
{
    if (c->stem != NULL) {
        if (c->lowercase) {
            if (!grow((void **)&c->lowered, &c->lowered_allocated, LOWERED_ROOM(length), 1))
                return 0;
            length = lowered_token(c, token, length, c->lowered);
            token = c->lowered;
        }
        return length >= 0 && count_number(c, stemmed_number(c, token, length));
    }
    if (c->lowercase || c->stopwords != NULL) {
        if (!grow((void **)&c->lowered, &c->lowered_allocated, LOWERED_ROOM(length), 1))
            return 0;
        Py_ssize_t lowered = lowered_token(c, token, length, c->lowered);
        if (lowered < 0)
            return 0;
        if (c->stopwords != NULL) {
            Py_ssize_t slot;
            if (find(c->stopwords, c->lowered, lowered, hash_of(c->lowered, lowered), &slot) >= 0)
                return 1;
        }
        if (c->lowercase) {
            token = c->lowered;
            length = lowered;
        }
    }
    return count_number(c, token_number(c, token, length));
}

/* Cut one document (UTF-8) into words and count them, each byte lowercased (as asked) as it is read: the tokens
 * of most jobs (no n-grams; stop words only when lowercased, so that one hash serves).  A word holding a byte past
 * ASCII is lowercased whole, by code point, after the document's bytes (its length may change). */
static int
count_words(Counting *c, const char *text, Py_ssize_t length)
{
    if (!grow((void **)&c->lowered, &c->lowered_allocated, length, 1))
        return 0;
    const unsigned char *word_character = c->word_character, *bytes = (const unsigned char *)text;
    const char *key = c->key;
    char *keyed = c->lowered; /* locals: a store through char * would make the compiler reload c's fields */
    Py_ssize_t spilled = length; /* where the next word lowercased by code point goes */
    for (Py_ssize_t i = 0; i < length;) {
        if (!word_character[bytes[i]]) {
            i++;
            continue;
        }
        Py_ssize_t start = i, slot;
        unsigned char seen = 0;
        for (; i < length && word_character[bytes[i]]; i++) {
            keyed[i] = key[bytes[i]]; /* in the token's place: it stays there until it is looked up */
            seen |= bytes[i];
        }
        Py_ssize_t at = start, size = i - start;
        if (seen >= 0x80 && c->lowercase) {
            if (!grow((void **)&c->lowered, &c->lowered_allocated, spilled + LOWERED_ROOM(size), 1))
                return 0;
            keyed = c->lowered; /* queued tokens are kept by their offsets: they stay where they were */
            size = lowered_token(c, text + start, size, keyed + spilled);
            if (size < 0)
                return 0;
            at = spilled;
            spilled += size;
        }
        uint64_t hash = hash_of(keyed + at, size);
        if (c->stopwords != NULL && find(c->stopwords, keyed + at, size, hash, &slot) >= 0)
            continue;
        if (!wait_for_lookup(c, keyed, at, size, hash))
            return 0;
    }
    return look_up_batch(c, keyed);
}

/* Whether an ASCII byte is whitespace to Python's str.split(): \t \n \v \f \r, \x1c to \x1f and the space. */
static int
is_space(unsigned char byte)
{
    return (byte >= 9 && byte <= 13) || (byte >= 28 && byte <= 32);
}

/* Count one ASCII document's character n-grams as scikit-learn's char_wb analyzer makes them: each
 * whitespace-separated word, lowercased as asked, padded with one space each side, gives its runs of n
 * characters for each n from ngram_min to ngram_max, and a padded word of n characters or fewer gives
 * itself once and ends its n-grams. */
static int
count_characters(Counting *c, const char *text, Py_ssize_t length)
{
    if (!grow((void **)&c->lowered, &c->lowered_allocated, length + 2, 1))
        return 0;
    const unsigned char *bytes = (const unsigned char *)text;
    char *padded = c->lowered;
    for (Py_ssize_t i = 0; i < length;) {
        if (is_space(bytes[i])) {
            i++;
            continue;
        }
        Py_ssize_t size = 1;
        for (; i < length && !is_space(bytes[i]); i++)
            padded[size++] = c->key[bytes[i]];
        padded[0] = ' ';
        padded[size++] = ' ';
        for (Py_ssize_t n = c->ngram_min; n <= c->ngram_max; n++) {
            Py_ssize_t width = size < n ? size : n;
            for (Py_ssize_t at = 0; at + width <= size; at++)
                if (!count_number(c, token_number(c, padded + at, width)))
                    return 0;
            if (size <= n)
                break;
        }
    }
    return 1;
}

/* Count the n-gram at c->token + ``start`` (``length`` bytes) as :func:`count_token` does, lowercased in place
 * and queued for :func:`look_up_batch` (the batch has room); hashed, or not lowercased, it is counted at once by
 * :func:`count_token` (no vocabulary to fetch from, or stop words compared on a lowercased copy), and then
 * none waits. */
static int
queue_ngram(Counting *c, Py_ssize_t start, Py_ssize_t length)
{
    if (c->n_columns || !c->lowercase || c->stem != NULL)
        return count_token(c, c->token + start, length);
    char *token = c->token + start;
    if (!all_ascii(token, length)) /* lowercased by code point, its length may change: counted at once, after the
                                      n-grams waiting (so that the numbers are those one at a time gives) */
        return look_up_batch(c, c->token) && count_token(c, token, length);
    for (Py_ssize_t i = 0; i < length; i++)
        token[i] = (char)(token[i] >= 'A' && token[i] <= 'Z' ? token[i] + 32 : token[i]);
    Py_ssize_t slot;
    uint64_t hash = hash_of(token, length);
    if (c->stopwords != NULL && find(c->stopwords, token, length, hash, &slot) >= 0)
        return 1;
    return wait_for_lookup(c, c->token, start, length, hash);
}

/* Cut one document into its tokens and count them: ASCII, or UTF-8 with its non-ASCII delimiters marked
 * (:func:`count_unicode`), its character n-grams then counted by :func:`count_unicode_characters`. */
static int
count_document(Counting *c, const char *text, Py_ssize_t length)
{
    if (c->characters)
        return count_characters(c, text, length);
    if (c->ngram_min == 0 && (c->lowercase || c->stopwords == NULL) && !c->n_columns && c->stem == NULL)
        return count_words(c, text, length);
    Py_ssize_t n_words = 0;
    for (Py_ssize_t i = 0; i < length;) {
        if (!c->word_character[(unsigned char)text[i]]) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < length && c->word_character[(unsigned char)text[i]])
            i++;
        if (c->ngram_min == 0) {
            if (!count_token(c, text + start, i - start))
                return 0;
            continue;
        }
        if (!grow((void **)&c->starts, &c->words_allocated, n_words + 1, sizeof(Py_ssize_t)) ||
            !grow((void **)&c->ends, &c->ends_allocated, n_words + 1, sizeof(Py_ssize_t)))
            return 0;
        c->starts[n_words] = start;
        c->ends[n_words++] = i;
    }
    /* each n-gram made after the one before in c->token, where it waits to be looked up (:func:`queue_ngram`):
     * the scratch holds a batch of them at most */
    Py_ssize_t made = 0;
    for (Py_ssize_t n = c->ngram_min; c->ngram_min && n <= c->ngram_max && n <= n_words; n++) {
        for (Py_ssize_t first = 0; first + n <= n_words; first++) {
            if (c->n_waiting == BATCH) {
                if (!look_up_batch(c, c->token))
                    return 0;
                made = 0;
            }
            else if (c->n_waiting == 0) /* none counted at once, or left out, holds its place */
                made = 0;
            Py_ssize_t used = made;
            for (Py_ssize_t k = first; k < first + n; k++) {
                Py_ssize_t size = c->ends[k] - c->starts[k];
                if (!grow((void **)&c->token, &c->token_allocated, used + size + 1, 1))
                    return 0;
                if (k > first)
                    c->token[used++] = ' ';
                memcpy(c->token + used, text + c->starts[k], size);
                used += size;
            }
            Py_ssize_t start = made; /* trimmed as Java's String.trim: characters up to U+0020 */
            while (used > start && (unsigned char)c->token[used - 1] <= ' ')
                used--;
            while (used > start && (unsigned char)c->token[start] <= ' ')
                start++;
            if (!queue_ngram(c, start, used - start))
                return 0;
            made = used;
        }
    }
    return c->n_waiting == 0 || look_up_batch(c, c->token);
}

#if UNICODE_IN_C
/* The bytes of a code point whose first byte is ``lead`` (UTF-8, or a surrogate as surrogatepass writes it). */
static inline int
code_point_size(unsigned char lead)
{
    return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

/* Count one UTF-8 document's character n-grams as :func:`count_characters` counts an ASCII one's, by code point:
 * the words are the runs of code points that are not whitespace to ``str.split`` (is_white_space), each
 * lowercased alone (the final sigma's context ends at whitespace, which is neither cased nor case-ignorable, so a
 * word's lowercasing is the document's). */
static int
count_unicode_characters(Counting *c, const char *text, Py_ssize_t length)
{
    const unsigned char *bytes = (const unsigned char *)text;
    for (Py_ssize_t at = 0; at < length;) {
        Py_ssize_t start = at;
        if (is_white_space(read_code_point(bytes, &at)))
            continue;
        for (Py_ssize_t next = at; at < length && !is_white_space(read_code_point(bytes, &next)); next = at)
            at = next;
        Py_ssize_t word = at - start; /* the word's bytes, its scratch sized by them (not by the document's) */
        if (!grow((void **)&c->points, &c->points_allocated, word, sizeof(Py_UCS4)) ||
            !grow((void **)&c->lowered, &c->lowered_allocated, LOWERED_ROOM(word) + 2, 1) ||
            !grow((void **)&c->offsets, &c->offsets_allocated, LOWERED_ROOM(word) + 3, sizeof(Py_ssize_t)))
            return 0;
        char *padded = c->lowered;
        Py_ssize_t size = 1;
        if (c->lowercase) {
            Py_ssize_t n = 0;
            for (Py_ssize_t k = start; k < at;)
                c->points[n++] = read_code_point(bytes, &k);
            size += write_lowered(c->points, n, padded + 1);
        }
        else {
            memcpy(padded + 1, text + start, (size_t)word);
            size += word;
        }
        padded[0] = padded[size++] = ' ';
        Py_ssize_t n_points = 0;
        for (Py_ssize_t k = 0; k < size; k += code_point_size((unsigned char)padded[k]))
            c->offsets[n_points++] = k;
        c->offsets[n_points] = size;
        for (Py_ssize_t gram = c->ngram_min; gram <= c->ngram_max; gram++) {
            Py_ssize_t width = n_points < gram ? n_points : gram;
            for (Py_ssize_t first = 0; first + width <= n_points; first++) {
                Py_ssize_t from = c->offsets[first];
                if (!count_number(c, token_number(c, padded + from, c->offsets[first + width] - from)))
                    return 0;
            }
            if (n_points <= gram)
                break;
        }
    }
    return 1;
}

/* Whether a code point past ASCII is one of the delimiters. */
static int
is_wide_delimiter(const Counting *c, Py_UCS4 point)
{
    Py_ssize_t low = 0, high = c->n_wide_delimiters;
    while (low < high) {
        Py_ssize_t middle = (low + high) / 2;
        if (c->wide_delimiters[middle] < point)
            low = middle + 1;
        else
            high = middle;
    }
    return low < c->n_wide_delimiters && c->wide_delimiters[low] == point;
}

/* Cut one UTF-8 document that is not all ASCII into its tokens and count them: as an ASCII one
 * (:func:`count_document`) once the bytes of each non-ASCII delimiter are marked 0xFF (never a byte of UTF-8, never
 * a word's), or its character n-grams by code point. */
static int
count_unicode(Counting *c, const char *text, Py_ssize_t length)
{
    if (c->characters)
        return count_unicode_characters(c, text, length);
    if (c->n_wide_delimiters == 0 || c->alphabetic)
        return count_document(c, text, length);
    if (!grow((void **)&c->marked, &c->marked_allocated, length, 1))
        return 0;
    for (Py_ssize_t at = 0; at < length;) {
        Py_ssize_t start = at;
        Py_UCS4 point = read_code_point((const unsigned char *)text, &at);
        if (point >= 0x80 && is_wide_delimiter(c, point))
            memset(c->marked + start, 0xFF, (size_t)(at - start));
        else
            memcpy(c->marked + start, text + start, (size_t)(at - start));
    }
    return count_document(c, c->marked, length);
}

/* A string's UTF-8 bytes (lone surrogates as surrogatepass writes them) in c->unicode, read from its code points
 * without the GIL (a string cannot change); their length, -1 when out of memory. */
static Py_ssize_t
utf8_of_string(Counting *c, PyObject *text)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (!grow((void **)&c->unicode, &c->unicode_allocated, 4 * n + 1, 1))
        return -1;
    Py_ssize_t written = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        written += write_code_point(PyUnicode_READ(kind, data, i), c->unicode + written);
    return written;
}
#endif

/* Sort a row's pairs by their distinct token numbers: quicksort on the median of three (never the
 * least or greatest of distinct numbers, so both parts shrink), the smaller part first, then
 * insertion sort; no comparison callback (qsort and its callback took over a quarter of ``words``' time). */
static void
sort_by_id(Pair *pairs, Py_ssize_t n)
{
    while (n > 16) {
        int64_t a = pairs[0].id, b = pairs[n / 2].id, z = pairs[n - 1].id;
        int64_t pivot = a < b ? (b < z ? b : (a < z ? z : a)) : (a < z ? a : (b < z ? z : b));
        Py_ssize_t i = -1, j = n;
        for (;;) {
            do
                i++;
            while (pairs[i].id < pivot);
            do
                j--;
            while (pairs[j].id > pivot);
            if (i >= j)
                break;
            Pair swapped = pairs[i];
            pairs[i] = pairs[j];
            pairs[j] = swapped;
        }
        if (j + 1 < n - j - 1) {
            sort_by_id(pairs, j + 1);
            pairs += j + 1;
            n -= j + 1;
        }
        else {
            sort_by_id(pairs + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    for (Py_ssize_t k = 1; k < n; k++) {
        Pair moved = pairs[k];
        Py_ssize_t at = k;
        for (; at > 0 && pairs[at - 1].id > moved.id; at--)
            pairs[at] = pairs[at - 1];
        pairs[at] = moved;
    }
}

/* Put the current row's pairs in ascending number (a transform's).  A row holding many numbers of a
 * small vocabulary, such as a transform's kept words, by one scan of a bit per number: that took a
 * fifth of the sort's time on Reuters grain; any other row by sort_by_id. */
static int
order_row(Counting *c)
{
    Pair *row = c->pairs + c->row_start;
    Py_ssize_t n = c->n_pairs - c->row_start;
    Py_ssize_t n_blocks = ((c->n_columns ? c->n_columns : c->vocabulary->n) + 63) / 64;
    if (n_blocks > 4 * n) {
        sort_by_id(row, n);
        return 1;
    }
    Py_ssize_t before = c->held_allocated;
    if (!grow((void **)&c->held, &c->held_allocated, n_blocks, sizeof(uint64_t)) ||
        !grow((void **)&c->ordered, &c->ordered_allocated, n, sizeof(Pair)))
        return 0;
    memset(c->held + before, 0, (size_t)(c->held_allocated - before) * sizeof(uint64_t));
    for (Py_ssize_t k = 0; k < n; k++)
        c->held[row[k].id >> 6] |= 1ULL << (row[k].id & 63);
    Py_ssize_t k = 0;
    for (Py_ssize_t block = 0; k < n; block++) {
        for (uint64_t bits = c->held[block]; bits; bits &= bits - 1)
            c->ordered[k++] = c->pairs[c->pair_of[block * 64 + __builtin_ctzll(bits)]];
        c->held[block] = 0;
    }
    memcpy(row, c->ordered, (size_t)n * sizeof(Pair));
    return 1;
}

/* Count one document through the Python fallback (an iterable of its final tokens, taken one at a time:
 * the count stops at the bound before the rest are made); the GIL held. */
static int
count_through(Counting *c, PyObject *fallback, PyObject *text)
{
    PyObject *tokens = PyObject_CallOneArg(fallback, text);
    PyObject *iterator = tokens == NULL ? NULL : PyObject_GetIter(tokens);
    Py_XDECREF(tokens);
    if (iterator == NULL)
        return 0;
    int ok = 1;
    PyObject *token;
    while (ok && (token = PyIter_Next(iterator)) != NULL) {
        ok = count_number(c, number_of_string(c->shared, c->vocabulary, token, c->add, c->n_columns));
        Py_DECREF(token);
    }
    Py_DECREF(iterator);
    return ok && !PyErr_Occurred();
}

/* One column of ``count``'s documents: a tuple of one str or None per row (a tuple, so that no other thread can
 * drop a text while the GIL is released), or, from the ARFF reader, every row's text as UTF-8 bytes one after
 * another, with where each row starts there and its length (no Python object per document). */
typedef struct {
    PyObject *strings; /* the tuple; NULL for bytes */
    Py_buffer bytes;   /* a bytes object's: it cannot change */
    int64_t *starts, *lengths; /* copies, checked once: the caller's arrays may change while the GIL is released */
} Texts;

/* Count one document given as a str or as UTF-8 bytes (``text`` NULL): cut here (without the GIL unless
 * ``*released`` is NULL, a stemmer's count), or through the fallback with it: bytes that are not UTF-8 (which it
 * refuses), any text past ASCII where the interpreter's case tables are not reachable. */
static int
count_text(Counting *c, PyObject *text, const char *bytes, Py_ssize_t length, PyObject *fallback,
           PyThreadState **released)
{
    if (text != NULL && PyUnicode_IS_ASCII(text))
        return count_document(c, (const char *)PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text));
    if (text == NULL && all_ascii(bytes, length))
        return count_document(c, bytes, length);
#if UNICODE_IN_C
    if (text != NULL) {
        Py_ssize_t encoded = utf8_of_string(c, text);
        return encoded >= 0 && count_unicode(c, c->unicode, encoded);
    }
    if (valid_utf8((const unsigned char *)bytes, length))
        return count_unicode(c, bytes, length);
#endif
    if (*released != NULL)
        PyEval_RestoreThread(*released);
    PyObject *made = text == NULL ? PyUnicode_DecodeUTF8(bytes, length, NULL) : Py_NewRef(text);
    int ok = made != NULL && count_through(c, fallback, made);
    Py_XDECREF(made);
    if (*released != NULL)
        *released = PyEval_SaveThread();
    return ok;
}

/* Count the rows of the ``n_columns`` columns ``texts``.  Without a stemmer the GIL is released, so the threads
 * reading and writing the rows run meanwhile; the fallback takes it again. */
static int
count_rows(Counting *c, Texts *texts, Py_ssize_t n_columns, Py_ssize_t n_rows, PyObject *fallback, int64_t *indptr)
{
    int ok = 1;
    PyThreadState *released = c->stem == NULL ? PyEval_SaveThread() : NULL;
    indptr[0] = 0;
    for (Py_ssize_t row = 0; ok && row < n_rows; row++) {
        c->row_start = c->n_pairs;
        for (Py_ssize_t column = 0; ok && column < n_columns; column++) {
            Texts *given = &texts[column];
            if (given->strings != NULL) {
                PyObject *text = PyTuple_GET_ITEM(given->strings, row);
                if (text != Py_None)
                    ok = count_text(c, text, NULL, 0, fallback, &released);
            }
            else
                ok = count_text(c, NULL, (const char *)given->bytes.buf + given->starts[row],
                                (Py_ssize_t)given->lengths[row], fallback, &released);
        }
        if (ok && !c->add && c->n_pairs > c->row_start) /* a fit adds the pairs up in any order */
            ok = order_row(c);
        indptr[row + 1] = c->n_pairs;
    }
    if (released != NULL)
        PyEval_RestoreThread(released);
    return ok;
}

static void
release_texts(Texts *texts, Py_ssize_t n_columns)
{
    for (Py_ssize_t column = 0; texts != NULL && column < n_columns; column++) {
        if (texts[column].strings != NULL)
            Py_DECREF(texts[column].strings);
        else {
            PyBuffer_Release(&texts[column].bytes);
            PyMem_Free(texts[column].starts);
            PyMem_Free(texts[column].lengths);
        }
    }
    PyMem_Free(texts);
}

static int eight_byte_buffer(PyObject *object, Py_buffer *view, char kind, const char *name);

/* Whether a column is given as (bytes, starts, ends): its texts' bytes come first (no column of strings holds
 * bytes). */
static int
is_bytes_column(PyObject *given)
{
    return PyTuple_Check(given) && PyTuple_GET_SIZE(given) == 3 && PyBytes_Check(PyTuple_GET_ITEM(given, 0));
}

/* A column given as (bytes, starts, ends): int64 arrays of n_rows starts and ends within the bytes, each start at
 * most its end, copied; 0 with an exception otherwise. */
static int
bytes_of(PyObject *given, Py_ssize_t n_rows, Texts *texts)
{
    Py_buffer starts, ends;
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(given, 0), &texts->bytes, PyBUF_SIMPLE) < 0)
        return 0;
    if (!eight_byte_buffer(PyTuple_GET_ITEM(given, 1), &starts, 'q', "count: a column's starts")) {
        PyBuffer_Release(&texts->bytes);
        return 0;
    }
    if (!eight_byte_buffer(PyTuple_GET_ITEM(given, 2), &ends, 'q', "count: a column's ends")) {
        PyBuffer_Release(&starts);
        PyBuffer_Release(&texts->bytes);
        return 0;
    }
    int fits = starts.len / 8 == n_rows && ends.len == starts.len;
    texts->starts = fits ? PyMem_Malloc((size_t)n_rows * sizeof(int64_t) + 1) : NULL;
    texts->lengths = fits ? PyMem_Malloc((size_t)n_rows * sizeof(int64_t) + 1) : NULL;
    if (fits && (texts->starts == NULL || texts->lengths == NULL))
        PyErr_NoMemory();
    for (Py_ssize_t row = 0; texts->lengths != NULL && fits && row < n_rows; row++) {
        int64_t start = ((const int64_t *)starts.buf)[row], end = ((const int64_t *)ends.buf)[row];
        fits = 0 <= start && start <= end && end <= texts->bytes.len;
        texts->starts[row] = start;
        texts->lengths[row] = end - start;
    }
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    if (!fits && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "a column of bytes needs a start and an end within them for each row");
    if (PyErr_Occurred()) {
        PyBuffer_Release(&texts->bytes);
        PyMem_Free(texts->starts);
        PyMem_Free(texts->lengths);
        texts->starts = texts->lengths = NULL;
        return 0;
    }
    return 1;
}

/* Each column's texts as Texts (*n_columns of them), checked to hold n_rows strings or None, or n_rows texts of
 * bytes; NULL with an exception otherwise. */
static Texts *
texts_of(PyObject *columns, Py_ssize_t n_rows, Py_ssize_t *n_columns)
{
    PyObject *held = PySequence_Tuple(columns); /* the columns kept, whatever iterating one of them does */
    if (held == NULL)
        return NULL;
    Texts *texts = PyMem_Calloc((size_t)PyTuple_GET_SIZE(held) + 1, sizeof(Texts));
    Py_ssize_t made = 0;
    for (; texts != NULL && made < PyTuple_GET_SIZE(held); made++) {
        PyObject *given = PyTuple_GET_ITEM(held, made);
        if (is_bytes_column(given)) {
            if (!bytes_of(given, n_rows, &texts[made]))
                break;
            continue;
        }
        PyObject *row_texts = PySequence_Tuple(given);
        if (row_texts == NULL)
            break;
        texts[made].strings = row_texts;
        if (PyTuple_GET_SIZE(row_texts) != n_rows) {
            PyErr_SetString(PyExc_ValueError, "each column must be a list of one text per row");
            made++;
            break;
        }
        Py_ssize_t row = 0;
        for (; row < n_rows; row++) {
            PyObject *text = PyTuple_GET_ITEM(row_texts, row);
            if (text != Py_None && !PyUnicode_Check(text)) {
                PyErr_Format(PyExc_TypeError, "a document is %.100s, not a string", Py_TYPE(text)->tp_name);
                break;
            }
#if PY_VERSION_HEX < 0x030C0000 /* a string of the deprecated wide-character API, made ready to be read without the GIL */
            if (text != Py_None && PyUnicode_READY(text) < 0)
                break;
#endif
        }
        if (row < n_rows) {
            made++;
            break;
        }
    }
    Py_DECREF(held);
    if (texts == NULL)
        PyErr_NoMemory();
    else if (PyErr_Occurred()) {
        release_texts(texts, made);
        texts = NULL;
    }
    *n_columns = made;
    return texts;
}

/* A token's bytes (UTF-8, surrogates allowed) and where it was among the numbers given to java_order. */
typedef struct {
    const unsigned char *bytes;
    Py_ssize_t length;
    int64_t position;
} Spelled;

/* The next UTF-16 code unit of ``bytes`` from ``*at`` (-1 at the end), a character beyond the Basic Multilingual
 * Plane giving its high surrogate and leaving its low one in ``*low`` for the next call. */
static int32_t
next_unit(const unsigned char *bytes, Py_ssize_t length, Py_ssize_t *at, int32_t *low)
{
    if (*low) {
        int32_t unit = *low;
        *low = 0;
        return unit;
    }
    if (*at >= length)
        return -1;
    unsigned lead = bytes[*at];
    Py_ssize_t size = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (*at + size > length) /* not UTF-8 (no vocabulary holds such): its bytes as units */
        size = 1;
    uint32_t point = size == 1 ? lead : lead & (0xFFu >> (size + 1));
    for (Py_ssize_t k = 1; k < size; k++)
        point = point << 6 | (bytes[*at + k] & 0x3Fu);
    *at += size;
    if (point < 0x10000)
        return (int32_t)point;
    point -= 0x10000;
    *low = (int32_t)(0xDC00 | (point & 0x3FF));
    return (int32_t)(0xD800 | (point >> 10));
}

/* Java's String.compareTo: by UTF-16 code units.  UTF-8's byte order is the code points' order, which is the code
 * units' unless a character beyond the Basic Multilingual Plane meets one of U+E000-U+FFFF (its surrogates sort
 * below those): the bytes are compared until the first that differ, and from there, where one of the two begins
 * such a character, the code units.  Two tokens Java holds for one (a character beyond the plane and its two
 * surrogates written apart) are ordered by their bytes, not by which was met first. */
static int
java_compare(const void *first, const void *second)
{
    const Spelled *a = first, *b = second;
    Py_ssize_t common = a->length < b->length ? a->length : b->length, at = 0;
    while (at < common && a->bytes[at] == b->bytes[at])
        at++;
    if (at == common)
        return (a->length > b->length) - (a->length < b->length);
    if (a->bytes[at] < 0xF0 && b->bytes[at] < 0xF0) /* neither begins a character beyond the plane here */
        return a->bytes[at] < b->bytes[at] ? -1 : 1;
    Py_ssize_t at_a = at, at_b = at;
    int32_t low_a = 0, low_b = 0;
    for (;;) {
        int32_t unit_a = next_unit(a->bytes, a->length, &at_a, &low_a);
        int32_t unit_b = next_unit(b->bytes, b->length, &at_b, &low_b);
        if (unit_a != unit_b)
            return unit_a < unit_b ? -1 : 1;
        if (unit_a < 0)
            return a->bytes[at] < b->bytes[at] ? -1 : 1;
    }
}

/* java_order(numbers) -> bytes: the positions in ``numbers`` (int64 token numbers of this vocabulary, distinct)
 * ordered as Java orders their tokens: ``words`` kept in Weka's order, sorted in C on the tokens' own bytes (150,000
 * bigrams' Python strings sorted by a key took 0.1 s). */
static PyObject *
Vocabulary_java_order(Vocabulary *self, PyObject *numbers)
{
    Py_buffer view;
    if (!eight_byte_buffer(numbers, &view, 'q', "java_order: numbers"))
        return NULL;
    if (!take(self, 0)) { /* no thread adds to it meanwhile */
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t n = view.len / 8;
    const int64_t *number = view.buf;
    Spelled *spelled = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Spelled));
    PyObject *result = spelled == NULL ? PyErr_NoMemory() : PyBytes_FromStringAndSize(NULL, n * 8);
    if (result != NULL) {
        for (Py_ssize_t k = 0; k < n; k++) {
            if (number[k] < 0 || number[k] >= self->n) {
                PyErr_SetString(PyExc_ValueError, "java_order: a number not in the vocabulary");
                Py_CLEAR(result);
                break;
            }
            const Entry *entry = &self->entries[number[k]];
            spelled[k] = (Spelled){(const unsigned char *)self->text + entry->offset, entry->length, k};
        }
    }
    if (result != NULL) {
        qsort(spelled, (size_t)n, sizeof(Spelled), java_compare);
        int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
        for (Py_ssize_t k = 0; k < n; k++)
            out[k] = spelled[k].position;
    }
    PyMem_Free(spelled);
    give_back(self);
    PyBuffer_Release(&view);
    return result;
}

/* words_of(numbers) -> list: the tokens of ``numbers`` (int64, of this vocabulary) as new strings, made in that
 * order: a fit's kept words in column order are then laid out in memory as every later pass over them reads them
 * (taken from ``words``, they lay in the order they were met, and each pass over 150,000 bigrams' names missed
 * the cache at every one). */
static PyObject *
Vocabulary_words_of(Vocabulary *self, PyObject *numbers)
{
    Py_buffer view;
    if (!eight_byte_buffer(numbers, &view, 'q', "words_of: numbers"))
        return NULL;
    if (!take(self, 0)) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t n = view.len / 8;
    const int64_t *number = view.buf;
    PyObject *words = PyList_New(n);
    for (Py_ssize_t k = 0; words != NULL && k < n; k++) {
        if (number[k] < 0 || number[k] >= self->n) {
            PyErr_SetString(PyExc_ValueError, "words_of: a number not in the vocabulary");
            Py_CLEAR(words);
            break;
        }
        const Entry *entry = &self->entries[number[k]];
        PyObject *word = PyUnicode_DecodeUTF8(self->text + entry->offset, entry->length, "surrogatepass");
        if (word == NULL)
            Py_CLEAR(words);
        else
            PyList_SET_ITEM(words, k, word);
    }
    give_back(self);
    PyBuffer_Release(&view);
    return words;
}

static PyMethodDef Vocabulary_methods[] = {
    {"ids", (PyCFunction)Vocabulary_ids, METH_O,
     "Each word's number (int64 bytes), words not yet numbered added; words: strings, or a Vocabulary's."},
    {"words_of", (PyCFunction)Vocabulary_words_of, METH_O,
     "The tokens of the numbers (int64), as new strings made in that order."},
    {"java_order", (PyCFunction)Vocabulary_java_order, METH_O,
     "The positions of the numbers (int64, distinct), ordered as Java orders their words (int64 bytes)."},
    {"__reduce__", (PyCFunction)Vocabulary_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyGetSetDef Vocabulary_getset[] = {
    {"words", (getter)Vocabulary_get_words, NULL, "A list of the distinct tokens, in the order of their numbers.", NULL},
    {NULL},
};

static PySequenceMethods Vocabulary_sequence = {.sq_length = (lenfunc)Vocabulary_length};

static PyTypeObject VocabularyType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "filterkit._words.Vocabulary",
    .tp_doc = "Distinct tokens numbered in the order they came, from an optional list of words.",
    .tp_basicsize = sizeof(Vocabulary),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Vocabulary_new,
    .tp_dealloc = (destructor)Vocabulary_dealloc,
    .tp_methods = Vocabulary_methods,
    .tp_getset = Vocabulary_getset,
    .tp_as_sequence = &Vocabulary_sequence,
};

static int
ascending_code_points(const void *first, const void *second)
{
    Py_UCS4 a = *(const Py_UCS4 *)first, b = *(const Py_UCS4 *)second;
    return (a > b) - (a < b);
}

/* Read ``delimiters`` (unless alphabetic): each ASCII one a byte no word holds, those past ASCII in
 * c->wide_delimiters, ascending; 0 with MemoryError. */
static int
wide_delimiters_of(Counting *c, PyObject *delimiters)
{
    Py_ssize_t n = c->alphabetic ? 0 : PyUnicode_GET_LENGTH(delimiters);
    c->wide_delimiters = PyMem_Malloc((size_t)n * sizeof(Py_UCS4) + 1);
    if (c->wide_delimiters == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 character = PyUnicode_READ_CHAR(delimiters, i);
        if (character < 128)
            c->word_character[character] = 0;
        else
            c->wide_delimiters[c->n_wide_delimiters++] = character;
    }
    qsort(c->wide_delimiters, (size_t)c->n_wide_delimiters, sizeof(Py_UCS4), ascending_code_points);
    return 1;
}

/* count(vocabulary, columns, n_rows, add, most, delimiters, alphabetic, lowercase, ngram_min, ngram_max,
 *       stem, stopwords, fallback[, characters, n_columns, shared]) -> (indptr, pairs)
 *
 * columns: one per converted attribute: a list of each row's text (a string or None), or a tuple
 * (bytes, starts, ends) of every row's UTF-8 text and int64 arrays of where each starts and ends in
 * the bytes (schema.RawTexts.rows); a row's tokens are those of its texts in turn.  add: number the tokens not yet in ``vocabulary``
 * (else they are left out); None once ``vocabulary`` would hold more than ``most``.  delimiters: a string.
 * ngram_min 0: words, not n-grams.  stem: None, or a function of one token (cut and lowercased) giving its stem, or
 * None to leave it out (stop words are then its to leave out: ``stopwords`` is not used); the GIL is then held
 * throughout.  fallback: a function of one text giving its final tokens, for bytes that are not UTF-8 (it
 * raises) and, on Python 3.13 or later, any text past ASCII.
 * characters (default false): the tokens are character n-grams of ngram_min to ngram_max within
 * whitespace-separated words (``alphabetic``, ``delimiters`` and ``stopwords`` unused).  n_columns
 * (default 0), or a power of two: each token's number is its hashed column (``vocabulary`` unused,
 * ``add`` false).
 * stopwords: a Vocabulary of lowercased stop words, left out of ASCII texts, or None.
 * shared (default None; with ``add``): a Vocabulary only read, so that two calls may count with it at once,
 * each adding to a ``vocabulary`` of its own: a token it holds has its number there, any other its number in
 * ``vocabulary`` plus len(shared) (which the caller maps once ``vocabulary``'s tokens are added to ``shared``).
 * Returns bytes of int64: the n_rows + 1 row offsets, and per row its (token number,
 * occurrences) pairs, by ascending number unless ``add`` (in the order first met: a fit
 * only adds them up).  The vocabularies may not be added to by another thread meanwhile. */
static PyObject *
count(PyObject *module, PyObject *args)
{
    Counting c = {0};
    PyObject *columns, *delimiters, *stem, *stopwords, *fallback, *shared = Py_None;
    Py_ssize_t n_rows;
    if (!PyArg_ParseTuple(args, "O!O!npnUppiiOOO|pnO:count", &VocabularyType, &c.vocabulary, &PyList_Type, &columns,
                          &n_rows, &c.add, &c.most, &delimiters, &c.alphabetic, &c.lowercase, &c.ngram_min, &c.ngram_max,
                          &stem, &stopwords, &fallback, &c.characters, &c.n_columns, &shared))
        return NULL;
    if (stem != Py_None && !PyCallable_Check(stem)) {
        PyErr_SetString(PyExc_TypeError, "stem must be None or callable");
        return NULL;
    }
    c.stem = stem == Py_None ? NULL : stem;
    if (shared != Py_None && (!PyObject_TypeCheck(shared, &VocabularyType) || !c.add)) {
        PyErr_SetString(PyExc_TypeError, "shared must be None, or a Vocabulary with add true");
        return NULL;
    }
    c.shared = shared == Py_None ? NULL : (Vocabulary *)shared;
    if (c.n_columns < 0 || c.n_columns > ((Py_ssize_t)1 << 31) || (c.n_columns & (c.n_columns - 1)) ||
        (c.n_columns && c.add)) {
        PyErr_SetString(PyExc_ValueError, "n_columns must be 0 or a power of two up to 2**31, and add false with it");
        return NULL;
    }
    if (stopwords != Py_None && !PyObject_TypeCheck(stopwords, &VocabularyType)) {
        PyErr_SetString(PyExc_TypeError, "stopwords must be a Vocabulary or None");
        return NULL;
    }
    c.stopwords = stopwords == Py_None ? NULL : (Vocabulary *)stopwords;
    for (int byte = 0; byte < 256; byte++) {
        c.word_character[byte] = c.alphabetic ? (byte | 32) >= 'a' && (byte | 32) <= 'z' : 1;
        c.key[byte] = (char)(c.lowercase && byte >= 'A' && byte <= 'Z' ? byte + 32 : byte);
    }
    c.word_character[0xFF] = 0;
    if (!wide_delimiters_of(&c, delimiters))
        return NULL;
    Py_ssize_t n_texts;
    Texts *texts = texts_of(columns, n_rows, &n_texts);
    if (texts == NULL) {
        PyMem_Free(c.wide_delimiters);
        return NULL;
    }
    PyObject *indptr = PyBytes_FromStringAndSize(NULL, (n_rows + 1) * (Py_ssize_t)sizeof(int64_t));
    PyObject *result = NULL;
    int taken = indptr != NULL && take(c.vocabulary, c.add);
    int shared_taken = taken && (c.shared == NULL || take(c.shared, 0));
    int stopwords_taken = shared_taken && (c.stopwords == NULL || take(c.stopwords, 0));
    if (stopwords_taken) {
        if (count_rows(&c, texts, n_texts, n_rows, fallback, (int64_t *)PyBytes_AS_STRING(indptr)))
            result = Py_BuildValue("(Oy#)", indptr, c.pairs ? (const char *)c.pairs : "",
                                   c.n_pairs * (Py_ssize_t)sizeof(Pair));
        else if (c.full && !PyErr_Occurred())
            result = Py_NewRef(Py_None);
        else
            failed();
    }
    if (stopwords_taken && c.stopwords != NULL)
        give_back(c.stopwords);
    if (shared_taken && c.shared != NULL)
        give_back(c.shared);
    if (taken)
        give_back(c.vocabulary);
    release_texts(texts, n_texts);
    Py_XDECREF(indptr);
    PyMem_RawFree(c.token);
    PyMem_RawFree(c.lowered);
    PyMem_RawFree(c.starts);
    PyMem_RawFree(c.ends);
    PyMem_RawFree(c.pairs);
    PyMem_RawFree(c.pair_of);
    PyMem_RawFree(c.held);
    PyMem_RawFree(c.ordered);
    PyMem_RawFree(c.unicode);
    PyMem_RawFree(c.marked);
    PyMem_RawFree(c.points);
    PyMem_RawFree(c.offsets);
    PyMem_Free(c.wide_delimiters);
    return result;
}

/* hash_columns(vocabulary, n_columns) -> bytes of int64: the hashed column of each of its tokens, by number. */
static PyObject *
hash_columns(PyObject *module, PyObject *args)
{
    Vocabulary *vocabulary;
    Py_ssize_t n_columns;
    if (!PyArg_ParseTuple(args, "O!n:hash_columns", &VocabularyType, &vocabulary, &n_columns))
        return NULL;
    if (n_columns < 1 || n_columns > ((Py_ssize_t)1 << 31) || (n_columns & (n_columns - 1))) {
        PyErr_SetString(PyExc_ValueError, "n_columns must be a power of two up to 2**31");
        return NULL;
    }
    if (!take(vocabulary, 0))
        return NULL;
    PyObject *columns = PyBytes_FromStringAndSize(NULL, vocabulary->n * (Py_ssize_t)sizeof(int64_t));
    for (Py_ssize_t k = 0; columns != NULL && k < vocabulary->n; k++) {
        Entry *entry = &vocabulary->entries[k];
        ((int64_t *)PyBytes_AS_STRING(columns))[k] = column_of(vocabulary->text + entry->offset, entry->length, n_columns);
    }
    give_back(vocabulary);
    return columns;
}

/* A contiguous buffer of ``n`` items of 8 bytes, int64 (``kind`` 'q') or float64 ('d'); 0 with TypeError otherwise,
 * naming the argument as ``name`` says ("renumber: indptr"). */
static int
eight_byte_buffer(PyObject *object, Py_buffer *view, char kind, const char *name)
{
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return 0;
    const char *format = view->format != NULL ? view->format : "B";
    int fits = view->itemsize == 8 && view->ndim <= 1 && (uintptr_t)view->buf % 8 == 0 &&
               (format[0] == kind || (kind == 'q' && sizeof(long) == 8 && format[0] == 'l')) && format[1] == '\0';
    if (!fits) {
        PyErr_Format(PyExc_TypeError, "%s must be an aligned %s array", name, kind == 'q' ? "int64" : "float64");
        PyBuffer_Release(view);
    }
    return fits;
}

/* Each row's entries renumbered (``renumber``, below) into ``out``; 0 on an entry out of range (ValueError set by
 * the caller).  A row's words are put in order by sort_by_id, or, when it holds many numbers for their range, by a
 * bit per number (``held``), a bit per 64 numbers of those (``blocks``), all 0 between rows, and their sums
 * (``sums``): the bits took a sixth of the renumbering's time on Reuters, and the bits of blocks let long rows of
 * many numbers skip the empty ones (``--hash 16`` on Reuters ×50 had sorted every row: 136 ms).  Runs without
 * the GIL: every number is read once and checked before it is used. */
static int
renumber_rows(const int64_t *indptr, Py_ssize_t n_rows, const int64_t *indices, const double *data, Py_ssize_t n,
              int64_t first, const int64_t *table, Py_ssize_t n_table, int64_t n_numbers, int64_t *out_indptr,
              int64_t *out_indices, double *out_data, Pair *scratch, uint64_t *held, uint64_t *blocks, double *sums)
{
    Py_ssize_t made = 0, end = 0, n_block_words = (Py_ssize_t)((n_numbers + 64 * 64 - 1) / (64 * 64));
    out_indptr[0] = 0;
    for (Py_ssize_t row = 0; row < n_rows; row++) {
        Py_ssize_t start = end;
        end = (Py_ssize_t)indptr[row + 1];
        if (end < start || end > n)
            return 0;
        Py_ssize_t n_words = 0;
        for (Py_ssize_t k = start; k < end; k++) {
            int64_t index = indices[k];
            double value = data[k];
            if (index < 0)
                return 0;
            if (index < first) { /* an attribute kept: before the words, as they came */
                out_indices[made] = index;
                out_data[made++] = value;
                continue;
            }
            if (index - first >= n_table || !(value >= 0 && value < 9007199254740992.0) || value != (double)(int64_t)value)
                return 0;
            int64_t number = table[index - first];
            if (number >= n_numbers)
                return 0;
            if (number >= 0)
                scratch[n_words++] = (Pair){number, (int64_t)value};
        }
        if (held != NULL && n_block_words <= n_words) {
            for (Py_ssize_t k = 0; k < n_words; k++) {
                int64_t number = scratch[k].id;
                uint64_t bit = 1ULL << (number & 63);
                double count = (double)scratch[k].count; /* summed as the sort's path sums: no int64 to overflow */
                sums[number] = held[number >> 6] & bit ? sums[number] + count : count;
                held[number >> 6] |= bit;
                blocks[number >> 12] |= 1ULL << ((number >> 6) & 63);
            }
            for (Py_ssize_t word = 0; word < n_block_words; word++) {
                for (uint64_t in_use = blocks[word]; in_use; in_use &= in_use - 1) {
                    Py_ssize_t block = word * 64 + __builtin_ctzll(in_use);
                    for (uint64_t bits = held[block]; bits; bits &= bits - 1) {
                        int64_t number = (int64_t)block * 64 + __builtin_ctzll(bits);
                        out_indices[made] = first + number;
                        out_data[made++] = sums[number];
                    }
                    held[block] = 0;
                }
                blocks[word] = 0;
            }
        }
        else {
            sort_by_id(scratch, n_words);
            for (Py_ssize_t k = 0; k < n_words; k++) {
                if (k > 0 && scratch[k].id == scratch[k - 1].id) { /* two tokens of one hashed column */
                    out_data[made - 1] += (double)scratch[k].count;
                    continue;
                }
                out_indices[made] = first + scratch[k].id;
                out_data[made++] = (double)scratch[k].count;
            }
        }
        out_indptr[row + 1] = made;
    }
    return end == n;
}

/* renumber(indptr, indices, data, first, table, n_numbers) -> (indptr, indices, data) as bytearrays (numpy reads them
 * writable, as the rows of a transform are) of int64, int64, float64: CSR rows whose entries below column ``first``
 * are kept as they are and the others are (token number + first, occurrences), each token number replaced by
 * ``table[number]`` (-1: left out; else below ``n_numbers``), then put in ascending order, the occurrences of a number
 * met twice added: a ``words`` fit's rows (numbered as the fit met the tokens) made its transform's. */
static PyObject *
renumber(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"indptr", "indices", "data", "first", "table", "n_numbers", NULL};
    PyObject *objects[4];
    long long first, n_numbers;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOLOL:renumber", keywords, &objects[0], &objects[1],
                                     &objects[2], &first, &objects[3], &n_numbers))
        return NULL;
    Py_buffer views[4];
    static const char kinds[4] = {'q', 'q', 'd', 'q'};
    static const char *names[4] = {"renumber: indptr", "renumber: indices", "renumber: data", "renumber: table"};
    int taken = 0;
    while (taken < 4 && eight_byte_buffer(objects[taken], &views[taken], kinds[taken], names[taken]))
        taken++;
    PyObject *result = NULL, *out[3] = {NULL, NULL, NULL};
    if (taken < 4)
        goto done;
    Py_ssize_t n_rows = views[0].len / 8 - 1, n = views[1].len / 8;
    if (n_rows < 0 || views[2].len != views[1].len || first < 0 || ((int64_t *)views[0].buf)[0] != 0 ||
        n_numbers < 0 || n_numbers > ((int64_t)1 << 40) || first > INT64_MAX - n_numbers) {
        PyErr_SetString(PyExc_ValueError, "renumber: indptr must start at 0, indices and data be of one length, and "
                                          "first and n_numbers be in range");
        goto done;
    }
    out[0] = PyByteArray_FromStringAndSize(NULL, (n_rows + 1) * 8);
    out[1] = PyByteArray_FromStringAndSize(NULL, n * 8);
    out[2] = PyByteArray_FromStringAndSize(NULL, n * 8);
    Pair *scratch = PyMem_RawMalloc((size_t)(n ? n : 1) * sizeof(Pair));
    /* a bit and a sum per number only where some row could hold enough of them for the bits (not 2**31 columns) */
    int by_bits = (n_numbers + 63) / 64 <= 4 * (int64_t)n;
    uint64_t *held = by_bits ? PyMem_RawCalloc((size_t)(n_numbers + 63) / 64 + 1, sizeof(uint64_t)) : NULL;
    uint64_t *blocks = by_bits ? PyMem_RawCalloc((size_t)(n_numbers + 4095) / 4096 + 1, sizeof(uint64_t)) : NULL;
    double *sums = by_bits ? PyMem_RawMalloc((size_t)(n_numbers ? n_numbers : 1) * sizeof(double)) : NULL;
    if (out[0] == NULL || out[1] == NULL || out[2] == NULL || scratch == NULL ||
        (by_bits && (held == NULL || blocks == NULL || sums == NULL))) {
        PyMem_RawFree(scratch);
        PyMem_RawFree(held);
        PyMem_RawFree(blocks);
        PyMem_RawFree(sums);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = renumber_rows(views[0].buf, n_rows, views[1].buf, views[2].buf, n, first, views[3].buf, views[3].len / 8,
                       n_numbers, (int64_t *)PyByteArray_AS_STRING(out[0]), (int64_t *)PyByteArray_AS_STRING(out[1]),
                       (double *)PyByteArray_AS_STRING(out[2]), scratch, held, blocks, sums);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    PyMem_RawFree(held);
    PyMem_RawFree(blocks);
    PyMem_RawFree(sums);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "renumber: an entry is out of range (indptr, a column, a number or a count)");
        goto done;
    }
    Py_ssize_t made = (Py_ssize_t)((int64_t *)PyByteArray_AS_STRING(out[0]))[n_rows];
    if (PyByteArray_Resize(out[1], made * 8) == 0 && PyByteArray_Resize(out[2], made * 8) == 0)
        result = PyTuple_Pack(3, out[0], out[1], out[2]);
done:
    for (int k = 0; k < taken; k++)
        PyBuffer_Release(&views[k]);
    for (int k = 0; k < 3; k++)
        Py_XDECREF(out[k]);
    return result;
}

/* A one-dimensional buffer of int64, or of float64 too where ``is_double`` is given (set to whether it is), with any
 * stride (a column of count's pairs); 0 with TypeError otherwise, naming the argument as ``name`` says. */
static int
eight_byte_column(PyObject *object, Py_buffer *view, const char *name, int *is_double)
{
    if (PyObject_GetBuffer(object, view, PyBUF_STRIDED_RO | PyBUF_FORMAT) < 0)
        return 0;
    const char *format = view->format != NULL ? view->format : "B";
    int whole = format[0] == 'q' || (sizeof(long) == 8 && format[0] == 'l'), real = is_double != NULL && format[0] == 'd';
    int fits = view->itemsize == 8 && view->ndim == 1 && view->strides[0] % 8 == 0 && (uintptr_t)view->buf % 8 == 0 &&
               (whole || real) && format[1] == '\0';
    if (!fits) {
        PyErr_Format(PyExc_TypeError, "%s must be an aligned %s array", name,
                     is_double != NULL ? "int64 or float64" : "int64");
        PyBuffer_Release(view);
    }
    else if (is_double != NULL)
        *is_double = real;
    return fits;
}

/* join_kept(kept, indptr, ids, data) -> (values, columns, row_starts) as bytearrays of float64, int64, int64:
 * CSR rows each holding the values of its row of ``kept`` (a C-ordered float64 block, rows × n_kept) that are
 * not zero (NaN is not; -0.0 is, as for numpy's nonzero), at their columns, then its words: column ids[k] + n_kept
 * holding data[k] (int64 counts or float64 values), for k from indptr[row] to indptr[row + 1].  ``words``' kept
 * chunks, made in one pass: numpy's nonzero, repeats and scatters took 4 % of Debian ×10's ``--counts``. */
static PyObject *
join_kept(PyObject *module, PyObject *args)
{
    PyObject *objects[4];
    if (!PyArg_ParseTuple(args, "OOOO:join_kept", &objects[0], &objects[1], &objects[2], &objects[3]))
        return NULL;
    Py_buffer views[4];
    int taken = 0;
    if (PyObject_GetBuffer(objects[0], &views[0], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
        taken = 1;
        const char *format = views[0].format != NULL ? views[0].format : "B";
        if (views[0].ndim != 2 || views[0].itemsize != 8 || format[0] != 'd' || format[1] != '\0' ||
            (uintptr_t)views[0].buf % 8 != 0) {
            PyErr_SetString(PyExc_TypeError, "join_kept: kept must be an aligned two-dimensional float64 array");
            goto done;
        }
    }
    else
        goto done;
    if (!eight_byte_buffer(objects[1], &views[1], 'q', "join_kept: indptr"))
        goto done;
    taken = 2;
    int real = 0;
    for (; taken < 4; taken++)
        if (!eight_byte_column(objects[taken], &views[taken], taken == 2 ? "join_kept: ids" : "join_kept: data",
                               taken == 2 ? NULL : &real))
            goto done;
    PyObject *result = NULL, *out[3] = {NULL, NULL, NULL};
    Py_ssize_t n_rows = views[0].shape[0], n_kept = views[0].shape[1], n = views[2].shape[0];
    const double *kept = views[0].buf;
    const int64_t *indptr = views[1].buf;
    if (views[1].len / 8 != n_rows + 1 || views[3].shape[0] != n || indptr[0] != 0 || indptr[n_rows] != n) {
        PyErr_SetString(PyExc_ValueError, "join_kept: indptr must hold a start per row of kept and end at the words' "
                                          "count, and ids and data be of one length");
        goto release;
    }
    Py_ssize_t kept_values = 0;
    for (Py_ssize_t k = 0; k < n_rows * n_kept; k++)
        kept_values += kept[k] != 0.0;
    if (kept_values > PY_SSIZE_T_MAX / 8 - n) { /* n counts strided items, which need not hold 8 bytes each */
        PyErr_NoMemory();
        goto release;
    }
    out[0] = PyByteArray_FromStringAndSize(NULL, (kept_values + n) * 8);
    out[1] = PyByteArray_FromStringAndSize(NULL, (kept_values + n) * 8);
    out[2] = PyByteArray_FromStringAndSize(NULL, (n_rows + 1) * 8);
    if (out[0] == NULL || out[1] == NULL || out[2] == NULL)
        goto release;
    double *values = (double *)PyByteArray_AS_STRING(out[0]);
    int64_t *columns = (int64_t *)PyByteArray_AS_STRING(out[1]), *row_starts = (int64_t *)PyByteArray_AS_STRING(out[2]);
    const char *ids = views[2].buf, *data = views[3].buf;
    Py_ssize_t id_stride = views[2].strides[0], data_stride = views[3].strides[0], made = 0, limit = kept_values + n;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    row_starts[0] = 0;
    for (Py_ssize_t row = 0; row < n_rows && ok; row++) {
        for (Py_ssize_t j = 0; j < n_kept; j++) {
            double value = kept[row * n_kept + j];
            if (value != 0.0 && made < limit) { /* kept as counted above, unless another thread changed it */
                values[made] = value;
                columns[made++] = j;
            }
        }
        int64_t start = indptr[row], end = indptr[row + 1];
        if (start < 0 || end < start || end > n || made + (end - start) > limit) {
            ok = 0;
            break;
        }
        for (int64_t k = start; k < end; k++) {
            int64_t id = *(const int64_t *)(ids + k * id_stride);
            if (id < 0 || id > INT64_MAX - n_kept) {
                ok = 0;
                break;
            }
            const char *datum = data + k * data_stride;
            values[made] = real ? *(const double *)datum : (double)*(const int64_t *)datum;
            columns[made++] = id + n_kept;
        }
        row_starts[row + 1] = made;
    }
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "join_kept: indptr is not ascending within the words, or an id is negative");
        goto release;
    }
    if (PyByteArray_Resize(out[0], made * 8) == 0 && PyByteArray_Resize(out[1], made * 8) == 0)
        result = PyTuple_Pack(3, out[0], out[1], out[2]);
release:
    for (int k = 0; k < 3; k++)
        Py_XDECREF(out[k]);
    for (int k = 0; k < 4; k++)
        PyBuffer_Release(&views[k]);
    return result;
done:
    for (int k = 0; k < taken; k++)
        PyBuffer_Release(&views[k]);
    return NULL;
}

/* ``Tally``: per int64 key (plugins/words.py's (class, word) pairs, token number · classes + class), the sums
 * of its occurrences and of its documents, for the keys that occur: a hash table grown by doubling, so its
 * size follows the pairs met, not classes × words, and adding a chunk's keys costs a probe each, not a sort.
 * Keys are hashed by ``pair_hash``; the pairs are held in the order first met, and their sums do not depend
 * on that order.  A slot holds its pair's number and the top half of its key's hash, and a pair's key and sums
 * lie together: a probe reads a pair only when the hashes agree, and one read brings the key and its sums, not
 * three arrays' (with the slot a later key reads fetched ahead, ``add`` went from 8.6 % to 5.2 % of the CPU of
 * ``words --ngrams 1-2`` keeping every word of Debian ×10). */
typedef struct {
    int64_t key, occurrences, documents;
} Sums;

typedef struct {
    PyObject_HEAD
    uint64_t *slots; /* the hash's top 32 bits, then pair number + 1 in the low 32; 0 for an empty slot; a power
                        of two of them */
    Py_ssize_t n_slots;
    Sums *pairs;
    Py_ssize_t n, allocated;
    int busy; /* an ``add`` runs without the GIL */
} Tally;

/* A slot's content for pair number ``pair`` of hash ``hash``. */
static inline uint64_t
tally_slot(uint64_t hash, Py_ssize_t pair)
{
    return (hash & 0xffffffff00000000ULL) | (uint64_t)(pair + 1);
}

/* A key XORed with the random key, then MurmurHash3's 64-bit finalizer (a bijection each of whose output bits
 * depends on every input bit): keys made to share their low bits, as a class's pairs may (token · classes +
 * class), are spread, and keys sharing a slot under one random key share it under another only by chance.
 * SipHash of the eight bytes cost 2.3 times as much per pair (26 ns against 15 here). */
static inline uint64_t
pair_hash(int64_t key)
{
    uint64_t h = (uint64_t)key ^ hash_key[0];
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static int
tally_rehash(Tally *self)
{
    Py_ssize_t n_slots = self->n_slots * 2;
    uint64_t *slots = PyMem_RawCalloc((size_t)n_slots, sizeof(uint64_t));
    if (slots == NULL)
        return 0;
    for (Py_ssize_t k = 0; k < self->n; k++) {
        uint64_t hash = pair_hash(self->pairs[k].key);
        Py_ssize_t i = (Py_ssize_t)(hash & (uint64_t)(n_slots - 1));
        while (slots[i])
            i = (i + 1) & (n_slots - 1);
        slots[i] = tally_slot(hash, k);
    }
    PyMem_RawFree(self->slots);
    self->slots = slots;
    self->n_slots = n_slots;
    return 1;
}

/* How many keys ahead ``tally_add`` fetches a key's slot (a power of two); its pair is fetched half as far
 * ahead, once the slot has come.  Between two chunks' adds the count evicts the table from the caches: with the
 * slot 8 keys ahead and the pair not fetched, the adds took 64 ms of Debian ×10's ``--counts``; now 45. */
#define TALLY_AHEAD 32

/* Add ``n`` keys' occurrences and documents (each 1 when ``documents`` is NULL); 0 when out of memory, -1 when
 * a sum would pass INT64_MAX (no input's counts come near it; an edited model's might).  After an error the
 * keys before the failing one are added: the caller drops the tally. */
static int
tally_add(Tally *self, const int64_t *keys, const int64_t *occurrences, const int64_t *documents, Py_ssize_t n)
{
    uint64_t ahead[TALLY_AHEAD]; /* the hashes of the keys from k on, by k % TALLY_AHEAD */
    for (Py_ssize_t k = 0; k < n && k < TALLY_AHEAD; k++) {
        ahead[k] = pair_hash(keys[k]);
        __builtin_prefetch(&self->slots[ahead[k] & (uint64_t)(self->n_slots - 1)]);
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        uint64_t hash = ahead[k % TALLY_AHEAD], tag = hash & 0xffffffff00000000ULL;
        if (k + TALLY_AHEAD < n) { /* the slot a later key reads (a cache miss: half the add's time), fetched now */
            ahead[k % TALLY_AHEAD] = pair_hash(keys[k + TALLY_AHEAD]);
            __builtin_prefetch(&self->slots[ahead[k % TALLY_AHEAD] & (uint64_t)(self->n_slots - 1)]);
        }
        if (k + TALLY_AHEAD / 2 < n) { /* the pair of a nearer key, its slot fetched by now */
            uint64_t near = ahead[(k + TALLY_AHEAD / 2) % TALLY_AHEAD],
                     slot = self->slots[near & (uint64_t)(self->n_slots - 1)];
            if (slot)
                __builtin_prefetch(&self->pairs[(slot & 0xffffffffu) - 1]);
        }
        Py_ssize_t mask = self->n_slots - 1, i = (Py_ssize_t)(hash & (uint64_t)mask);
        Sums *pair = NULL;
        for (; self->slots[i]; i = (i + 1) & mask) {
            uint64_t slot = self->slots[i];
            if ((slot & 0xffffffff00000000ULL) == tag && self->pairs[(slot & 0xffffffffu) - 1].key == keys[k]) {
                pair = &self->pairs[(slot & 0xffffffffu) - 1];
                break;
            }
        }
        if (pair == NULL) {
            if (self->n >= UINT32_MAX - 1 ||
                !grow((void **)&self->pairs, &self->allocated, self->n + 1, sizeof(Sums)))
                return 0;
            self->slots[i] = tally_slot(hash, self->n);
            pair = &self->pairs[self->n++];
            *pair = (Sums){keys[k], 0, 0};
        }
        int64_t occurring, holding;
        if (__builtin_add_overflow(pair->occurrences, occurrences[k], &occurring) ||
            __builtin_add_overflow(pair->documents, documents != NULL ? documents[k] : 1, &holding))
            return -1;
        pair->occurrences = occurring;
        pair->documents = holding;
        if (self->n * 2 > self->n_slots && !tally_rehash(self))
            return 0;
    }
    return 1;
}

/* 0 with RuntimeError while an ``add`` runs without the GIL (it may move the arrays). */
static int
tally_free(Tally *self)
{
    if (self->busy)
        PyErr_SetString(PyExc_RuntimeError, "a words Tally is in use by another thread");
    return !self->busy;
}

/* An int64 buffer of ``n`` items (n < 0: any length, set to it), or a bytes object holding them (as ``arrays``
 * gives); 0 with TypeError or ValueError otherwise. */
static int
int64_buffer(PyObject *object, Py_buffer *view, Py_ssize_t *n)
{
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return 0;
    const char *format = view->format != NULL ? view->format : "B";
    int int64 = view->itemsize == 8 && (strcmp(format, "q") == 0 || (sizeof(long) == 8 && strcmp(format, "l") == 0));
    if (!int64 && !(PyBytes_Check(object) && view->len % 8 == 0)) { /* bytes: aligned as malloc aligns */
        PyErr_SetString(PyExc_TypeError, "a Tally adds int64 arrays");
        PyBuffer_Release(view);
        return 0;
    }
    if ((uintptr_t)view->buf % 8) {
        PyErr_SetString(PyExc_ValueError, "a Tally adds arrays aligned to 8 bytes");
        PyBuffer_Release(view);
        return 0;
    }
    if (*n >= 0 && view->len / 8 != *n) {
        PyErr_SetString(PyExc_ValueError, "a Tally adds arrays of one length");
        PyBuffer_Release(view);
        return 0;
    }
    *n = view->len / 8;
    return 1;
}

/* add(keys, occurrences[, documents]): each key's occurrences and documents (1 each without them) added. */
static PyObject *
Tally_add(Tally *self, PyObject *args)
{
    PyObject *objects[3] = {NULL, NULL, Py_None};
    if (!PyArg_ParseTuple(args, "OO|O:add", &objects[0], &objects[1], &objects[2]))
        return NULL;
    Py_buffer views[3];
    Py_ssize_t n = -1;
    int given = objects[2] == Py_None ? 2 : 3, taken = 0, ok = 0;
    for (; taken < given; taken++)
        if (!int64_buffer(objects[taken], &views[taken], &n))
            break;
    /* checked once the buffers are held: taking one may run Python code (__buffer__) and let a thread in */
    if (taken == given && tally_free(self)) {
        self->busy = 1;
        Py_BEGIN_ALLOW_THREADS
        ok = tally_add(self, views[0].buf, views[1].buf, given == 3 ? views[2].buf : NULL, n);
        Py_END_ALLOW_THREADS
        self->busy = 0;
        if (ok < 0)
            PyErr_SetString(PyExc_OverflowError, "a words Tally's sum would pass 2**63 - 1");
        else if (!ok)
            PyErr_NoMemory();
    }
    for (int a = 0; a < taken; a++)
        PyBuffer_Release(&views[a]);
    return ok > 0 ? Py_NewRef(Py_None) : NULL;
}

/* arrays() -> (keys, occurrences, documents): bytes of int64, the pairs in the order first met. */
static PyObject *
Tally_arrays(Tally *self, PyObject *unused)
{
    if (!tally_free(self))
        return NULL;
    Py_ssize_t size = self->n * (Py_ssize_t)sizeof(int64_t);
    PyObject *keys = PyBytes_FromStringAndSize(NULL, size), *occurrences = PyBytes_FromStringAndSize(NULL, size),
             *documents = PyBytes_FromStringAndSize(NULL, size), *arrays = NULL;
    if (keys != NULL && occurrences != NULL && documents != NULL) {
        for (Py_ssize_t k = 0; k < self->n; k++) {
            ((int64_t *)PyBytes_AS_STRING(keys))[k] = self->pairs[k].key;
            ((int64_t *)PyBytes_AS_STRING(occurrences))[k] = self->pairs[k].occurrences;
            ((int64_t *)PyBytes_AS_STRING(documents))[k] = self->pairs[k].documents;
        }
        arrays = PyTuple_Pack(3, keys, occurrences, documents);
    }
    Py_XDECREF(keys);
    Py_XDECREF(occurrences);
    Py_XDECREF(documents);
    return arrays;
}

static PyObject *
Tally_reduce(Tally *self, PyObject *unused)
{
    PyObject *arrays = Tally_arrays(self, NULL);
    PyObject *reduced = arrays == NULL ? NULL : Py_BuildValue("(OO)", Py_TYPE(self), arrays);
    Py_XDECREF(arrays);
    return reduced;
}

static Py_ssize_t
Tally_length(Tally *self)
{
    return tally_free(self) ? self->n : -1;
}

static void
Tally_dealloc(Tally *self)
{
    PyMem_RawFree(self->slots);
    PyMem_RawFree(self->pairs);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Tally_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Tally takes no keyword arguments");
        return NULL;
    }
    Tally *self = (Tally *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->n_slots = 64;
    self->slots = PyMem_RawCalloc(64, sizeof(uint64_t));
    if (self->slots == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    if (PyTuple_GET_SIZE(args)) { /* the arrays ``arrays`` gave: a pickled Tally */
        PyObject *added = Tally_add(self, args);
        if (added == NULL) {
            Py_DECREF(self);
            return NULL;
        }
        Py_DECREF(added);
    }
    return (PyObject *)self;
}

static PyMethodDef Tally_methods[] = {
    {"add", (PyCFunction)Tally_add, METH_VARARGS,
     "add(keys, occurrences[, documents]): int64 arrays of one length; documents 1 each when not given."},
    {"arrays", (PyCFunction)Tally_arrays, METH_NOARGS,
     "(keys, occurrences, documents) as bytes of int64, each key once, in the order first met."},
    {"__reduce__", (PyCFunction)Tally_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PySequenceMethods Tally_sequence = {.sq_length = (lenfunc)Tally_length};

static PyTypeObject TallyType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "filterkit._words.Tally",
    .tp_doc = "Sums of occurrences and documents per int64 key, for the keys that occur; "
              "Tally(keys, occurrences, documents) starts from arrays.",
    .tp_basicsize = sizeof(Tally),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Tally_new,
    .tp_dealloc = (destructor)Tally_dealloc,
    .tp_methods = Tally_methods,
    .tp_as_sequence = &Tally_sequence,
};

static PyMethodDef methods[] = {
    {"count", count, METH_VARARGS, "Each row's distinct tokens and their occurrences, as CSR arrays."},
    {"hash_columns", hash_columns, METH_VARARGS, "Each token's hashed column (MurmurHash3, as HashingVectorizer's)."},
    {"renumber", (PyCFunction)(void (*)(void))renumber, METH_VARARGS | METH_KEYWORDS,
     "A fit's rows of token numbers renumbered, in order: its transform's."},
    {"join_kept", join_kept, METH_VARARGS, "The kept attributes' values, then the words, as CSR rows."},
    {NULL},
};

/* The interface number filterkit/kernels.py (INTERFACES) expects: bump both whenever a function's arguments or
   results change, so that a module built from older source is refused with one error line instead of misbehaving. */
#define INTERFACE 12

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "filterkit._words", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__words(void)
{
    if (!draw_hash_key() || PyType_Ready(&VocabularyType) < 0 || PyType_Ready(&TallyType) < 0)
        return NULL;
#if UNICODE_IN_C
    fill_two_byte_tables();
#endif
    PyObject *created = PyModule_Create(&module);
    if (created != NULL && PyModule_AddObjectRef(created, "Vocabulary", (PyObject *)&VocabularyType) < 0)
        Py_CLEAR(created);
    if (created != NULL && PyModule_AddObjectRef(created, "Tally", (PyObject *)&TallyType) < 0)
        Py_CLEAR(created);
    if (created != NULL && PyModule_AddIntConstant(created, "INTERFACE", INTERFACE) < 0)
        Py_CLEAR(created);
    return created;
}
