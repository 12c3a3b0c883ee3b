/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcapfence internals shared between its source files; not installed and
 * not part of the library's interface.
 */
#ifndef CF_INTERNAL_H
#define CF_INTERNAL_H

/* the library implements both interfaces (<capfence/capfence.h>) */
#ifndef CAPFENCE_LIBRARY_BUILD
#define CAPFENCE_LIBRARY_BUILD
#endif
#include <capfence/capfence.h>

/* internal: not exported from the shared library, hidden in the archive */
#pragma GCC visibility push(hidden)

/*
 * Write one error line for the caller (capfence.h conventions): control
 * bytes echoed from the input become '?', so the line stays one line.
 */
void capfence__seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The rules of every options struct (capfence.h, CAPFENCE_OPTS): copy the
 * caller's in (NULL: all 0) to out (size bytes), taking the fields its sz
 * does not cover as 0. -EINVAL with a message naming what for an sz too
 * small to hold itself, or a non-zero byte at or past known, the end of
 * the last field this library knows (a field of a newer header, which may
 * sit in what is tail padding here). out's sz becomes size.
 */
int capfence__opts(const void *in, void *out, size_t size, size_t known,
		   const char *what, char *err, size_t errlen);
/* capfence__opts() into *out, whose last field is last */
#define CF_OPTS(in, out, last, what, err, errlen)				\
	capfence__opts(in, out, sizeof(*(out)),					\
		       offsetof(__typeof__(*(out)), last) + sizeof((out)->last), \
		       what, err, errlen)

/* HMAC-SHA256 of n canonical body bytes under k (the key's keyed state). */
void capfence__mac_body(const struct capfence_key *k, const uint8_t *body, size_t n,
		 uint8_t mac[CAPFENCE_MAC_LEN]);

/* Rows 3-4 of the delegation table (docs/errors.md) for a token already known to be authentic. */
enum capfence_reason capfence__decide_authentic(const struct capfence_token *t,
					 const struct capfence_epoch *receiver);

/*
 * Why constraint c does not fit class class_id: the kind of constraint the
 * class takes ("CIDR", "CID" or "path"), or NULL when it fits.
 */
const char *capfence__class_misfit(int class_id,
				   const struct capfence_constraint *c);
/* The system calls that exercise a class (NULL-terminated; empty for none). */
const char *const *capfence__class_syscalls(int class_id);
/* Initialise e: epoch_id, every class deny (capfence_epoch_init() of 1). */
void capfence__epoch_init(struct capfence_epoch *e, uint64_t epoch_id);
/*
 * An installed epoch into info, every installed epoch into *v (n entries,
 * malloc'd): capfence_client_epoch_get() and _list() of 1, the 2
 * interface's capfence_client_epoch_info() and _infos().
 */
int capfence__epoch_get(struct capfence_client *c, uint64_t epoch_id,
			struct capfence_epoch_info *info, char *err, size_t errlen);
int capfence__epoch_list(struct capfence_client *c, struct capfence_epoch_info **v,
			 size_t *n, char *err, size_t errlen);
/* capfence_epoch_format() of classes 1..max_class only (the 1.3 wrapper's). */
int capfence__epoch_format_classes(const struct capfence_epoch *e, char *buf, size_t len,
				   int max_class);

/*
 * The fleet chain (libcapfence's fleet agent, cf_fleet.c): a position
 * (seq, prev, link) the change commands of client c carry in their fleet
 * nest while set (NULL: none), the module's position, and a snapshot's
 * position set with FLEET_SET (<linux/capfence.h>, "The chain").
 */
struct capfence__fleet_link {
	uint64_t seq;
	uint8_t prev[CAPFENCE_FLEET_LINK_LEN];
	uint8_t link[CAPFENCE_FLEET_LINK_LEN];
};
void capfence__client_fleet_link(struct capfence_client *c,
				 const struct capfence__fleet_link *l);
/* The module's position (seq 0: none, link zeros). */
int capfence__fleet_chain_get(struct capfence_client *c, struct capfence__fleet_link *l,
			      char *err, size_t errlen);
/* Move the module to a snapshot's position l (seq and link). */
int capfence__fleet_chain_set(struct capfence_client *c, const struct capfence__fleet_link *l,
			      char *err, size_t errlen);

#pragma GCC visibility pop

/*
 * Bind a public function to its default symbol version, for the functions
 * whose arguments changed layout in that version: their earlier versions
 * are cf_compat.c's wrappers (CF_COMPAT_VERSION), and the name is listed
 * in every node of the version script that has a version of it. Only the
 * library's own objects (lib.mk: -DCF_SYMVER, for libcapfence.so.1 and
 * libcapfence.a) carry versions; the test programs and fuzzers that
 * compile the sources themselves get plain names.
 */
#ifdef CF_SYMVER
#define CF_DEFAULT_VERSION(api, node) \
	__asm__(".symver " #api "," #api "@@" #node ", remove")
#define CF_COMPAT_VERSION(internal, api, node) \
	__asm__(".symver " #internal "," #api "@" #node)
#else
#define CF_DEFAULT_VERSION(api, node) \
	_Static_assert(1, #api)
#define CF_COMPAT_VERSION(internal, api, node) \
	_Static_assert(1, #internal)
#endif

/*
 * What capfence__spawn_bound() does beside capfence_client_spawn_bound():
 * child() runs in the child after the epoch's filter, just before the
 * execve (0 or a negative errno, which fails the spawn); while the parent
 * waits for the execve, serve() is called whenever *fd is readable (it
 * may replace *fd, which starts at -1 for none).
 */
struct capfence__spawn_hooks {
	int (*child)(void *arg);
	void (*serve)(void *arg, int *fd);
	int fd;
	void *arg;
};

int capfence__spawn_bound(struct capfence_client *c, uint64_t epoch_id,
			  const struct capfence_token *tokens, size_t n,
			  const char *path, char *const argv[],
			  char *const envp[], pid_t *pid,
			  struct capfence_result *r,
			  struct capfence__spawn_hooks *h);

/* the learner's system calls (cf_learn.c), for its unit test */
struct capfence_learn *capfence__learn_alloc(bool syscalls, uint32_t open);
void capfence__learn_note_call(struct capfence_learn *l, uint32_t arch, int nr);

#endif /* CF_INTERNAL_H */
