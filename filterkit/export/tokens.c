/*
 * The words stage's tokenizer and counter (plugins/words.py's ``counted`` for a transform), in plain C99: the
 * algorithms of filterkit/_words.c, utf8_text.h and ascii_bytes.h on one document's UTF-8 bytes, reading the data
 * filterkit/export/words.py writes before this (the WORDS_ settings, the vocabulary's hash table, the stop words a
 * hashed transform leaves out, and the interpreter's lowercasing and whitespace as a two-stage table).
 *
 * A token is cut at the delimiters (Weka's WordTokenizer; those past ASCII by code point), or is a run of ASCII
 * letters (AlphabeticTokenizer); n-grams join MIN to MAX consecutive words with one space, trimmed as Java's
 * String.trim (bytes up to U+0020); character n-grams are the runs of MIN to MAX code points of each word that
 * str.split cuts, padded with a space each side (scikit-learn's char_wb).  Lowercasing is str.lower's: full
 * mappings, the final sigma by the token's own context (the word's, for character n-grams).  A token's number is
 * its word's in the vocabulary (left out when absent), or its MurmurHash3 column with hashing.
 *
 * No global mutable state: all a call writes is its caller's buffer and what it allocates itself.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t column;
    int64_t count;
} WordPair;

/* A buffer a call grows (malloc'd, freed when the call ends). */
typedef struct {
    unsigned char *bytes;
    size_t room;
} words_scratch;

/* The slots of the table of a call's distinct columns held on the stack (a document of up to half as many distinct
 * tokens needs no other). */
#define WORDS_STACK_SLOTS 512

/* One call's counting: the caller's buffer of pairs (one per distinct column, in the order met) and those in it, and
 * an open-addressing table of them by column (each slot the number of its pair + 1, 0 when empty): on the stack, or
 * allocated once it outgrows it. */
typedef struct {
    WordPair **pairs;
    size_t *allocated;
    size_t used;
    uint32_t *slots;
    size_t slot_mask;
    uint32_t stack_slots[WORDS_STACK_SLOTS];
    words_scratch token, lowered, spans;
} words_counting;

/* The bytes of the code point whose first byte is ``lead`` (valid UTF-8). */
static size_t
words_point_size(unsigned char lead)
{
    return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

/* The code point at ``bytes`` (valid UTF-8). */
static uint32_t
words_point_at(const unsigned char *bytes)
{
    size_t size = words_point_size(bytes[0]);
    uint32_t point = size == 1 ? bytes[0] : bytes[0] & (0x7Fu >> size);
    for (size_t k = 1; k < size; k++)
        point = point << 6 | (bytes[k] & 0x3Fu);
    return point;
}

/* The number of a code point's record in the Unicode table. */
static unsigned
words_record(uint32_t point)
{
    return WORDS_RECORD_OF[(size_t)WORDS_BLOCK_OF[point >> WORDS_BLOCK_SHIFT] << WORDS_BLOCK_SHIFT |
                           (point & ((1u << WORDS_BLOCK_SHIFT) - 1))];
}

static unsigned
words_flags(uint32_t point)
{
    return WORDS_FLAGS[words_record(point)];
}

/* Whether the capital sigma at ``bytes[at]`` (of ``n`` bytes) ends a word, as str.lower tests it: a cased
 * character before it and none after it, case-ignorable characters skipped both ways. */
static int
words_final_sigma(const unsigned char *bytes, size_t n, size_t at)
{
    size_t before = at;
    unsigned flags = 0;
    while (before > 0) {
        do
            before--;
        while (before > 0 && (bytes[before] & 0xC0) == 0x80);
        flags = words_flags(words_point_at(bytes + before));
        if (!(flags & WORDS_CASE_IGNORABLE))
            break;
    }
    if (!(flags & WORDS_CASED) || (flags & WORDS_CASE_IGNORABLE))
        return 0;
    for (size_t after = at + 2; after < n; after += words_point_size(bytes[after])) {
        flags = words_flags(words_point_at(bytes + after));
        if (!(flags & WORDS_CASE_IGNORABLE))
            return !(flags & WORDS_CASED);
    }
    return 1;
}

/* Lowercase the ``n`` bytes of UTF-8 at ``bytes`` as str.lower does into ``out`` (WORDS_ROOM_PER_BYTE times their
 * bytes); the bytes written. */
static size_t
words_lower(const unsigned char *bytes, size_t n, unsigned char *out)
{
    size_t written = 0;
    for (size_t at = 0; at < n;) {
        unsigned char lead = bytes[at];
        if (lead < 0x80) {
            out[written++] = (unsigned char)(lead >= 'A' && lead <= 'Z' ? lead + 32 : lead);
            at++;
            continue;
        }
        uint32_t point = words_point_at(bytes + at);
        unsigned record = words_record(point);
        if (point == 0x3A3)
            written += write_code_point(words_final_sigma(bytes, n, at) ? 0x3C2 : 0x3C3, out + written);
        else if (WORDS_FLAGS[record] & WORDS_SPECIAL) {
            const uint32_t *mapping = WORDS_SPECIAL_LOWER + 4 * (size_t)WORDS_LOWER_DELTA[record];
            for (uint32_t k = 1; k <= mapping[0]; k++)
                written += write_code_point(mapping[k], out + written);
        }
        else
            written += write_code_point((uint32_t)((int32_t)point + WORDS_LOWER_DELTA[record]), out + written);
        at += words_point_size(lead);
    }
    return written;
}

/* Room for ``needed`` bytes in ``scratch``, by doubling; 0 when out of memory. */
static int
words_room(words_scratch *scratch, size_t needed)
{
    if (needed <= scratch->room)
        return 1;
    size_t room = scratch->room ? scratch->room : 256;
    while (room < needed) {
        if (room > SIZE_MAX / 2)
            return 0;
        room *= 2;
    }
    unsigned char *grown = realloc(scratch->bytes, room);
    if (grown == NULL)
        return 0;
    scratch->bytes = grown;
    scratch->room = room;
    return 1;
}

/* The magnitude of the signed 32-bit hash, HashingVectorizer's |h| (|-2**31| is 2**31). */
static uint32_t
words_magnitude(const unsigned char *bytes, size_t n)
{
    uint32_t h = murmur3_32(bytes, (ptrdiff_t)n);
    return h >> 31 ? 0u - h : h;
}

/* The hash of the vocabulary's and the stop words' tables (words.py's table_hashes): of a key padded with zeros to a
 * multiple of 8 bytes, the polynomial h = h * WORDS_HASH_FACTOR + chunk over its 8-byte chunks (read little-endian)
 * from WORDS_HASH_SEED, then once more with its length for a chunk, modulo 2**64, mixed by MurmurHash3's 64-bit
 * finalizer. */
static uint64_t
words_key_hash(const unsigned char *key, size_t n)
{
    uint64_t h = WORDS_HASH_SEED;
    for (size_t k = 0; k < n; k += 8) {
        const unsigned char *b = key + k;
        h = h * WORDS_HASH_FACTOR + ((uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 |
                                     (uint64_t)b[3] << 24 | (uint64_t)b[4] << 32 | (uint64_t)b[5] << 40 |
                                     (uint64_t)b[6] << 48 | (uint64_t)b[7] << 56);
    }
    h = h * WORDS_HASH_FACTOR + n;
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    return h ^ h >> 33;
}

/* The number of the word ``key`` (``n`` bytes, then zeros up to a multiple of 8: a table's words are laid out so) of
 * mixed hash ``hash`` in a table words.py wrote (per slot the hash's high half and the word's number + 1, per word
 * where its bytes start and their length), -1 when absent. */
static int64_t
words_find(const unsigned char *key, size_t n, uint64_t hash, const uint32_t *slots, uint64_t mask,
           const uint32_t *spans, const unsigned char *bytes)
{
    uint32_t high = (uint32_t)(hash >> 32);
    for (uint64_t slot = hash & mask;; slot = (slot + 1) & mask) {
        uint32_t held = slots[2 * slot + 1];
        if (held == 0)
            return -1;
        if (slots[2 * slot] != high || spans[2 * (size_t)held - 1] != n)
            continue;
        const unsigned char *word = bytes + spans[2 * (size_t)held - 2];
        size_t k = 0;
        for (; k < n; k += 8) {
            uint64_t x, y;
            memcpy(&x, word + k, 8);
            memcpy(&y, key + k, 8);
            if (x != y)
                break;
        }
        if (k >= n)
            return (int64_t)held - 1;
    }
}

/* The number of a token in the vocabulary (``n`` bytes at ``key``, zeros after them up to a multiple of 8), -1 when
 * absent. */
static int64_t
words_vocabulary_number(const unsigned char *key, size_t n, uint64_t hash)
{
    return words_find(key, n, hash, WORDS_VOCABULARY_SLOTS, WORDS_VOCABULARY_MASK, WORDS_VOCABULARY_SPANS,
                      WORDS_VOCABULARY_BYTES);
}

/* A token's hashed column (HashingVectorizer's). */
static int64_t
words_hashed_column(const unsigned char *token, size_t n)
{
    return (int64_t)(words_magnitude(token, n) & (uint32_t)(WORDS_HASH_COLUMNS - 1));
}

/* Sort pairs of distinct columns by column: a few by insertion, more by their columns' bytes from the lowest (a
 * radix sort, as many passes as the greatest column has bytes, through c->token as scratch: no comparison to
 * mispredict, two thirds of a quicksort's time on 100 pairs); 0 when out of memory. */
static int
words_sort(words_counting *c, WordPair *pairs, size_t n)
{
    if (n <= 32) {
        for (size_t k = 1; k < n; k++) {
            WordPair moved = pairs[k];
            size_t at = k;
            for (; at > 0 && pairs[at - 1].column > moved.column; at--)
                pairs[at] = pairs[at - 1];
            pairs[at] = moved;
        }
        return 1;
    }
    if (n > SIZE_MAX / sizeof(WordPair) || !words_room(&c->token, n * sizeof(WordPair)))
        return 0;
    uint64_t every = 0;
    for (size_t k = 0; k < n; k++)
        every |= (uint64_t)pairs[k].column;
    WordPair *from = pairs, *to = (WordPair *)(void *)c->token.bytes;
    for (unsigned shift = 0; shift < 64 && every >> shift != 0; shift += 8) {
        size_t starts[257] = {0};
        for (size_t k = 0; k < n; k++)
            starts[((uint64_t)from[k].column >> shift & 0xFF) + 1]++;
        for (size_t digit = 1; digit <= 256; digit++)
            starts[digit] += starts[digit - 1];
        for (size_t k = 0; k < n; k++)
            to[starts[(uint64_t)from[k].column >> shift & 0xFF]++] = from[k];
        WordPair *sorted = to;
        to = from;
        from = sorted;
    }
    if (from != pairs)
        memcpy(pairs, from, n * sizeof(WordPair));
    return 1;
}

/* The slot of ``column`` in a table of ``mask`` + 1 slots: where it is, or the empty one where it would go. */
static size_t
words_slot_of(const words_counting *c, const uint32_t *slots, size_t mask, int64_t column)
{
    size_t slot = (size_t)(((uint64_t)column * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
    while (slots[slot] != 0 && (*c->pairs)[slots[slot] - 1].column != column)
        slot = (slot + 1) & mask;
    return slot;
}

/* Double the table of distinct columns (moved off the stack); 0 when out of memory. */
static int
words_more_slots(words_counting *c)
{
    size_t n_slots = 2 * (c->slot_mask + 1);
    uint32_t *slots = n_slots > SIZE_MAX / sizeof(uint32_t) ? NULL : calloc(n_slots, sizeof(uint32_t));
    if (slots == NULL)
        return 0;
    for (size_t k = 0; k < c->used; k++)
        slots[words_slot_of(c, slots, n_slots - 1, (*c->pairs)[k].column)] = (uint32_t)(k + 1);
    if (c->slots != c->stack_slots)
        free(c->slots);
    c->slots = slots;
    c->slot_mask = n_slots - 1;
    return 1;
}

/* Count one occurrence of ``column`` (none for -1, a token not in the vocabulary): its pair's count, or a new pair
 * (the caller's buffer doubled when full); 0 when out of memory. */
static int
words_add(words_counting *c, int64_t column)
{
    if (column < 0)
        return 1;
    size_t slot = words_slot_of(c, c->slots, c->slot_mask, column);
    if (c->slots[slot] != 0) {
        (*c->pairs)[c->slots[slot] - 1].count++;
        return 1;
    }
    if (c->used == *c->allocated) {
        size_t room = *c->allocated ? 2 * *c->allocated : 256;
        WordPair *grown = room > SIZE_MAX / sizeof(WordPair) ? NULL : realloc(*c->pairs, room * sizeof(WordPair));
        if (grown == NULL)
            return 0;
        *c->pairs = grown;
        *c->allocated = room;
    }
    if (c->used >= UINT32_MAX - 1)
        return 0;
    (*c->pairs)[c->used].column = column;
    (*c->pairs)[c->used++].count = 1;
    c->slots[slot] = (uint32_t)c->used;
    return 2 * c->used <= c->slot_mask + 1 || words_more_slots(c);
}

/* One token (``n`` bytes at ``token``): left out if its lowercase is a stop word (hashing alone), lowercased as
 * asked, its number counted. */
static int
words_token(words_counting *c, const unsigned char *token, size_t n)
{
    if (n > (SIZE_MAX - 8) / WORDS_ROOM_PER_BYTE || !words_room(&c->lowered, WORDS_ROOM_PER_BYTE * n + 8))
        return 0;
    unsigned char *key = c->lowered.bytes;
    size_t length = n;
    if (WORDS_LOWERCASE || WORDS_STOP_N > 0)
        length = words_lower(token, n, key);
    else
        memcpy(key, token, n);
    memset(key + length, 0, 8);
    if (WORDS_STOP_N > 0 && words_find(key, length, words_key_hash(key, length), WORDS_STOP_SLOTS, WORDS_STOP_MASK,
                                       WORDS_STOP_SPANS, WORDS_STOP_BYTES) >= 0)
        return 1;
    if (WORDS_HASH_COLUMNS)
        return WORDS_LOWERCASE ? words_add(c, words_hashed_column(key, length))
                               : words_add(c, words_hashed_column(token, n));
    return words_add(c, words_vocabulary_number(key, length, words_key_hash(key, length)));
}

/* Whether the code point at ``bytes`` is a delimiter past ASCII. */
static int
words_wide_delimiter(const unsigned char *bytes)
{
    uint32_t point = words_point_at(bytes);
    size_t n_wide = sizeof WORDS_WIDE_DELIMITERS / sizeof WORDS_WIDE_DELIMITERS[0], low = 0, high = n_wide;
    while (low < high) {
        size_t middle = (low + high) / 2;
        if (WORDS_WIDE_DELIMITERS[middle] < point)
            low = middle + 1;
        else
            high = middle;
    }
    return WORDS_N_WIDE_DELIMITERS > 0 && low < n_wide && WORDS_WIDE_DELIMITERS[low] == point;
}

/* The bytes of the character at ``text[at]`` if a token holds it, else 0. */
static size_t
words_word_character(const unsigned char *text, size_t at)
{
    unsigned char byte = text[at];
    if (!WORDS_WORD_BYTE[byte])
        return 0;
    if (byte < 0x80)
        return 1;
    if (WORDS_N_WIDE_DELIMITERS > 0 && words_wide_delimiter(text + at))
        return 0;
    return words_point_size(byte);
}

/* The next word of ``text`` from ``*at``: 0 at the end, else 1 with its bytes [*start, *at). */
static int
words_next_word(const unsigned char *text, size_t n, size_t *at, size_t *start)
{
    size_t i = *at, size = 0;
    while (i < n && (size = words_word_character(text, i)) == 0)
        i += WORDS_TOKENIZER == 1 ? 1 : words_point_size(text[i]);
    if (i >= n)
        return 0;
    *start = i;
    for (i += size; i < n && (size = words_word_character(text, i)) != 0;)
        i += size;
    *at = i;
    return 1;
}

/* The most tokens looked up together (words_look_up). */
#define WORDS_BATCH 32

/* A token waiting to be looked up: where its key is in the token scratch (then zeros up to a multiple of 8), its
 * length and its mixed hash. */
typedef struct {
    size_t offset, length;
    uint64_t hash;
} words_waiting;

/* Look up and count the ``n`` waiting tokens.  Their first slots, the spans of the words there and these words' first
 * eight bytes are read for all of them first, each a load the others do not wait on, so that a large vocabulary's
 * cache misses overlap; a token whose first slot holds another word is then looked up by words_find. */
static int
words_look_up(words_counting *c, const words_waiting *waiting, int n)
{
    uint32_t held[WORDS_BATCH], start[WORDS_BATCH], length[WORDS_BATCH];
    uint64_t head[WORDS_BATCH];
    for (int k = 0; k < n; k++) {
        uint64_t slot = waiting[k].hash & WORDS_VOCABULARY_MASK;
        int same = WORDS_VOCABULARY_SLOTS[2 * slot] == (uint32_t)(waiting[k].hash >> 32);
        held[k] = WORDS_VOCABULARY_SLOTS[2 * slot + 1] * (uint32_t)same;
    }
    for (int k = 0; k < n; k++) {
        start[k] = held[k] ? WORDS_VOCABULARY_SPANS[2 * (size_t)held[k] - 2] : 0;
        length[k] = held[k] ? WORDS_VOCABULARY_SPANS[2 * (size_t)held[k] - 1] : 0;
    }
    for (int k = 0; k < n; k++)
        memcpy(&head[k], WORDS_VOCABULARY_BYTES + start[k], 8);
    for (int k = 0; k < n; k++) {
        const unsigned char *key = c->token.bytes + waiting[k].offset;
        size_t size = waiting[k].length;
        uint64_t first;
        memcpy(&first, key, 8);
        int found = held[k] && length[k] == size && head[k] == first && size <= 8;
        if (!words_add(c, found ? (int64_t)held[k] - 1 : words_vocabulary_number(key, size, waiting[k].hash)))
            return 0;
    }
    return 1;
}

/* Count the words of a document whose tokens are its words looked up in the vocabulary (no n-grams, no hashing):
 * each word's bytes copied after the waiting ones' (ASCII lowercased as asked) and hashed as they are read, a word
 * holding a byte past ASCII lowercased whole after, by code point; looked up a batch at a time. */
static int
words_count_plain(words_counting *c, const unsigned char *text, size_t n)
{
    words_waiting waiting[WORDS_BATCH];
    int n_waiting = 0;
    size_t used = 0; /* the token scratch's bytes held by the waiting tokens */
    if (!words_room(&c->token, 256))
        return 0;
    for (size_t i = 0; i < n;) {
        size_t size = words_word_character(text, i);
        if (size == 0) {
            i += WORDS_TOKENIZER == 1 ? 1 : words_point_size(text[i]);
            continue;
        }
        if (n_waiting == WORDS_BATCH) {
            if (!words_look_up(c, waiting, n_waiting))
                return 0;
            n_waiting = 0;
            used = 0;
        }
        size_t start = i, length = 0;
        unsigned char *key = c->token.bytes + used;
        int wide = 0;
        while (i < n) {
            unsigned char byte = text[i];
            if (used + length + 16 > c->token.room) {
                if (!words_room(&c->token, used + length + 16))
                    return 0;
                key = c->token.bytes + used;
            }
            if (byte < 0x80) {
                if (!WORDS_WORD_BYTE[byte])
                    break;
                if (WORDS_LOWERCASE)
                    byte = (unsigned char)(byte | ((unsigned)(byte - 'A') < 26u) << 5);
                key[length++] = byte;
                i++;
                continue;
            }
            if ((size = words_word_character(text, i)) == 0)
                break;
            for (size_t k = 0; k < size; k++)
                key[length++] = text[i++];
            wide = 1;
        }
        if (wide && WORDS_LOWERCASE) {
            size_t word = i - start;
            if (word > (SIZE_MAX - 8 - used) / WORDS_ROOM_PER_BYTE ||
                !words_room(&c->token, used + WORDS_ROOM_PER_BYTE * word + 8))
                return 0;
            key = c->token.bytes + used;
            length = words_lower(text + start, word, key);
        }
        memset(key + length, 0, 8);
        waiting[n_waiting++] = (words_waiting){used, length, words_key_hash(key, length)};
        used += (length + 15) & ~(size_t)7;
    }
    return n_waiting == 0 || words_look_up(c, waiting, n_waiting);
}

/* Count a document's words, or with n-grams (WORDS_NGRAM_MIN > 0) each run of MIN to MAX of them joined by a
 * space and trimmed as Java trims. */
static int
words_count_words(words_counting *c, const unsigned char *text, size_t n)
{
    size_t at = 0, start, n_words = 0;
    while (words_next_word(text, n, &at, &start)) {
        if (WORDS_NGRAM_MIN == 0) {
            if (!words_token(c, text + start, at - start))
                return 0;
            continue;
        }
        if (!words_room(&c->spans, (n_words + 1) * 2 * sizeof(size_t)))
            return 0;
        size_t span[2] = {start, at};
        memcpy(c->spans.bytes + n_words++ * sizeof span, span, sizeof span);
    }
    for (size_t gram = WORDS_NGRAM_MIN; WORDS_NGRAM_MIN > 0 && gram <= WORDS_NGRAM_MAX && gram <= n_words; gram++) {
        for (size_t first = 0; first + gram <= n_words; first++) {
            size_t used = 0;
            for (size_t k = first; k < first + gram; k++) {
                size_t span[2];
                memcpy(span, c->spans.bytes + k * sizeof span, sizeof span);
                if (!words_room(&c->token, used + (span[1] - span[0]) + 1))
                    return 0;
                if (k > first)
                    c->token.bytes[used++] = ' ';
                memcpy(c->token.bytes + used, text + span[0], span[1] - span[0]);
                used += span[1] - span[0];
            }
            size_t from = 0;
            while (used > from && c->token.bytes[used - 1] <= ' ')
                used--;
            while (used > from && c->token.bytes[from] <= ' ')
                from++;
            if (!words_token(c, c->token.bytes + from, used - from))
                return 0;
        }
    }
    return 1;
}

/* The bytes of the character at ``text[at]`` if it is not whitespace to str.split, else 0. */
static size_t
words_unspaced(const unsigned char *text, size_t at)
{
    unsigned char byte = text[at];
    if (byte < 0x80)
        return (byte >= 9 && byte <= 13) || (byte >= 28 && byte <= 32) ? 0 : 1;
    return words_flags(words_point_at(text + at)) & WORDS_SPACE ? 0 : words_point_size(byte);
}

/* Count one character n-gram (``n`` bytes at ``gram``): its hashed column, or its number in the vocabulary looked up
 * from a copy padded with zeros. */
static int
words_window(words_counting *c, const unsigned char *gram, size_t n)
{
    if (WORDS_HASH_COLUMNS)
        return words_add(c, words_hashed_column(gram, n));
    if (!words_room(&c->token, n + 8))
        return 0;
    memcpy(c->token.bytes, gram, n);
    memset(c->token.bytes + n, 0, 8);
    return words_add(c, words_vocabulary_number(c->token.bytes, n, words_key_hash(c->token.bytes, n)));
}

/* Count a document's character n-grams as scikit-learn's char_wb makes them: each word (a run of what str.split
 * does not take for whitespace), lowercased as asked, padded with a space each side, gives its runs of ``gram``
 * code points for each gram from MIN to MAX; a padded word of ``gram`` code points or fewer gives itself once and
 * ends its n-grams. */
static int
words_count_characters(words_counting *c, const unsigned char *text, size_t n)
{
    for (size_t at = 0; at < n;) {
        size_t size = words_unspaced(text, at);
        if (size == 0) {
            at += words_point_size(text[at]);
            continue;
        }
        size_t start = at;
        for (at += size; at < n && (size = words_unspaced(text, at)) != 0;)
            at += size;
        size_t word = at - start;
        if (word > SIZE_MAX / WORDS_ROOM_PER_BYTE - 2 || !words_room(&c->lowered, WORDS_ROOM_PER_BYTE * word + 2))
            return 0;
        unsigned char *padded = c->lowered.bytes;
        size_t length = 1;
        if (WORDS_LOWERCASE)
            length += words_lower(text + start, word, padded + 1);
        else {
            memcpy(padded + 1, text + start, word);
            length += word;
        }
        padded[0] = padded[length++] = ' ';
        size_t n_points = 0;
        for (size_t k = 0; k < length; k += words_point_size(padded[k]))
            n_points++;
        for (size_t gram = WORDS_NGRAM_MIN; gram <= WORDS_NGRAM_MAX; gram++) {
            size_t width = n_points < gram ? n_points : gram, from = 0, to = 0;
            for (size_t k = 0; k < width; k++)
                to += words_point_size(padded[to]);
            for (;;) {
                if (!words_window(c, padded + from, to - from))
                    return 0;
                if (to >= length)
                    break;
                from += words_point_size(padded[from]);
                to += words_point_size(padded[to]);
            }
            if (n_points <= gram)
                break;
        }
    }
    return 1;
}

/* The distinct tokens of one document (utf8[0:n], no NUL needed) counted: pairs ascending by column (the word's
 * number in stage.words, or its hashed column with --hash), as counted() gives the row.  *pairs / *allocated: a
 * buffer the function grows with realloc (the caller starts them at NULL/0 and frees it).  Returns the number of
 * pairs, or -1 when the bytes are not UTF-8 as filterkit reads it (strict: overlong forms, surrogates, > U+10FFFF
 * refused), -2 when out of memory.  Thread-safe apart from the buffer (no global mutable state). */
static long
words_count(const unsigned char *utf8, size_t n, WordPair **pairs, size_t *allocated)
{
    if (!all_ascii(utf8, (ptrdiff_t)n) && !valid_utf8(utf8, (ptrdiff_t)n))
        return -1;
    words_counting c;
    c.pairs = pairs;
    c.allocated = allocated;
    c.used = 0;
    c.slots = c.stack_slots;
    c.slot_mask = WORDS_STACK_SLOTS - 1;
    memset(c.stack_slots, 0, sizeof c.stack_slots);
    c.token = c.lowered = c.spans = (words_scratch){NULL, 0};
    int counted = WORDS_TOKENIZER == 2                           ? words_count_characters(&c, utf8, n)
                  : WORDS_NGRAM_MIN == 0 && WORDS_HASH_COLUMNS == 0 ? words_count_plain(&c, utf8, n)
                                                                    : words_count_words(&c, utf8, n);
    counted = counted && words_sort(&c, *pairs, c.used);
    free(c.token.bytes);
    free(c.lowered.bytes);
    free(c.spans.bytes);
    if (c.slots != c.stack_slots)
        free(c.slots);
    if (!counted)
        return -2;
    return (long)c.used;
}
