// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: the 1 interface's own functions, in libcapfence.so.1 (and
 * libcapfence.a) only. libcapfence.so.2 is linked without this file: when
 * 1 goes, this file goes with it.
 *
 * Two kinds:
 *
 * 1. The calls the 2 interface left out (the end of this file): the
 *    positional twins of the options calls (key_install, _at, delegate,
 *    exec_set, spawn_bound ...), the epoch initialiser and the installed
 *    epochs as structs of CAPFENCE_CLASS_SLOTS classes. Each is one call
 *    of the options call it stands for.
 *
 * 2. The epoch functions of 1.3 and before, for programs built against
 *    those headers. Until 1.3, struct capfence_epoch and struct
 *    capfence_epoch_info were sized by the uapi's CAPFENCE_CLASS_MAX
 *    (rules[5], fenced_at[5]), so a new class would have changed their
 *    size under every binary that embeds them. Since 1.4 they hold
 *    CAPFENCE_CLASS_SLOTS classes and the functions taking them are new
 *    symbol versions (LIBCAPFENCE_1.4, the default a program links
 *    against); the symbols a program built before 1.4 is bound to
 *    (LIBCAPFENCE_1.0, _1.1, _1.3) stay, as the wrappers below, which
 *    convert between that frozen layout and today's. The frozen layout
 *    never changes: it is what those binaries were compiled with.
 *
 *    Converting in: the caller's classes 1..4 are copied, every class the
 *    old layout has no room for is denied (as capfence_epoch_init() would
 *    leave it). Converting out: a rule of a class beyond the old layout
 *    cannot be returned; the parsers refuse it with a message naming the
 *    class, and epoch_get/epoch_list leave it out (the caller knows no
 *    such class).
 *
 *    selftests/abi/ holds the 1.3 headers; make abi-check builds a
 *    program against them and runs it against this library.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cf_internal.h"

/* The layout of 1.0 to 1.3: class ids 0..4. Frozen. */
#define CF_V10_CLASSES	5

struct cf_v10_epoch {
	uint64_t epoch_id;
	struct capfence_rule rules[CF_V10_CLASSES];
};

struct cf_v10_epoch_info {
	struct cf_v10_epoch e;
	bool active;
	uint64_t fenced_at[CF_V10_CLASSES];
};

_Static_assert(sizeof(struct cf_v10_epoch) == 10432, "the 1.3 layout is frozen");
_Static_assert(sizeof(struct cf_v10_epoch_info) == 10480, "the 1.3 layout is frozen");
_Static_assert(CF_V10_CLASSES <= CAPFENCE_CLASS_SLOTS, "slots only grow");

/*
 * Each wrapper is bound to api@version (libbpf's COMPAT_VERSION); in the
 * test programs it is a plain function of its internal name.
 */
#define CF_COMPAT(internal, api, ver) CF_COMPAT_VERSION(internal, api, ver)

/* the classes both layouts hold */
static unsigned int v10_shared(void)
{
	return CAPFENCE_CLASS_MAX + 1 < CF_V10_CLASSES ?
		CAPFENCE_CLASS_MAX + 1 : CF_V10_CLASSES;
}

/* old -> new (the caller's input): e, fully written, or NULL for NULL */
static const struct capfence_epoch *v10_in(struct capfence_epoch *e,
					   const struct cf_v10_epoch *o)
{
	if (!o)
		return NULL;
	capfence__epoch_init(e, o->epoch_id);
	memcpy(e->rules, o->rules, v10_shared() * sizeof(o->rules[0]));
	return e;
}

/*
 * new -> old (a result). Returns the first class the old layout cannot
 * carry and that e does not deny, or 0.
 */
static int v10_out(struct cf_v10_epoch *o, const struct capfence_epoch *e)
{
	int cls, lost = 0;

	memset(o, 0, sizeof(*o));
	o->epoch_id = e->epoch_id;
	memcpy(o->rules, e->rules, v10_shared() * sizeof(o->rules[0]));
	for (cls = CF_V10_CLASSES; cls <= CAPFENCE_CLASS_MAX; cls++)
		if (e->rules[cls].kind != CAPFENCE_RULE_DENY && !lost)
			lost = cls;
	return lost;
}

static void v10_info_out(struct cf_v10_epoch_info *o,
			 const struct capfence_epoch_info *i)
{
	v10_out(&o->e, &i->e);
	o->active = i->active;
	memcpy(o->fenced_at, i->fenced_at, v10_shared() * sizeof(o->fenced_at[0]));
}

/* a parser's result in the old layout, or the class it cannot carry */
static int v10_parsed(int ret, struct cf_v10_epoch *o,
		      const struct capfence_epoch *e, char *err, size_t errlen)
{
	int lost = v10_out(o, e);

	if (ret || !lost)
		return ret;
	capfence__seterr(err, errlen,
			 "class \"%s\" does not fit this program's struct capfence_epoch "
			 "(built against libcapfence 1.3 or earlier): rebuild it",
			 capfence_class_name(lost));
	return -EINVAL;
}

/* ---- LIBCAPFENCE_1.0 ---- */

void capfence__v10_epoch_init(struct cf_v10_epoch *o, uint64_t epoch_id);
void capfence__v10_epoch_init(struct cf_v10_epoch *o, uint64_t epoch_id)
{
	struct capfence_epoch e;

	capfence__epoch_init(&e, epoch_id);
	v10_out(o, &e);
}
CF_COMPAT(capfence__v10_epoch_init, capfence_epoch_init, LIBCAPFENCE_1.0);

int capfence__v10_epoch_parse_rules(struct cf_v10_epoch *o, uint64_t epoch_id,
				    const char *const *rules, size_t n,
				    char *err, size_t errlen);
int capfence__v10_epoch_parse_rules(struct cf_v10_epoch *o, uint64_t epoch_id,
				    const char *const *rules, size_t n,
				    char *err, size_t errlen)
{
	struct capfence_epoch e;
	int ret = capfence_epoch_parse_rules(&e, epoch_id, rules, n, err, errlen);

	return v10_parsed(ret, o, &e, err, errlen);
}
CF_COMPAT(capfence__v10_epoch_parse_rules, capfence_epoch_parse_rules, LIBCAPFENCE_1.0);

int capfence__v10_epoch_parse_text(struct cf_v10_epoch *o, uint64_t epoch_id,
				   const char *text, char *err, size_t errlen);
int capfence__v10_epoch_parse_text(struct cf_v10_epoch *o, uint64_t epoch_id,
				   const char *text, char *err, size_t errlen)
{
	struct capfence_epoch e;
	int ret;

	if (!o)
		return -EINVAL;
	ret = capfence_epoch_parse_text(&e, epoch_id, text, err, errlen);
	return v10_parsed(ret, o, &e, err, errlen);
}
CF_COMPAT(capfence__v10_epoch_parse_text, capfence_epoch_parse_text, LIBCAPFENCE_1.0);

int capfence__v10_epoch_parse_file(struct cf_v10_epoch *o, uint64_t epoch_id,
				   const char *path, char *err, size_t errlen);
int capfence__v10_epoch_parse_file(struct cf_v10_epoch *o, uint64_t epoch_id,
				   const char *path, char *err, size_t errlen)
{
	struct capfence_epoch e;
	int ret;

	if (!o)
		return -EINVAL;
	ret = capfence_epoch_parse_file(&e, epoch_id, path, err, errlen);
	return v10_parsed(ret, o, &e, err, errlen);
}
CF_COMPAT(capfence__v10_epoch_parse_file, capfence_epoch_parse_file, LIBCAPFENCE_1.0);

int capfence__v10_epoch_format(const struct cf_v10_epoch *o, char *buf, size_t len);
int capfence__v10_epoch_format(const struct cf_v10_epoch *o, char *buf, size_t len)
{
	struct capfence_epoch e;

	if (!o)
		return -EINVAL;
	/* the classes a 1.3 program knows: its text stays 1.3's */
	return capfence__epoch_format_classes(v10_in(&e, o), buf, len, CF_V10_CLASSES - 1);
}
CF_COMPAT(capfence__v10_epoch_format, capfence_epoch_format, LIBCAPFENCE_1.0);

bool capfence__v10_epoch_narrows(const struct cf_v10_epoch *old_o,
				 const struct cf_v10_epoch *new_o, int class_id);
bool capfence__v10_epoch_narrows(const struct cf_v10_epoch *old_o,
				 const struct cf_v10_epoch *new_o, int class_id)
{
	/* only the class's rule is read: no conversion of the whole epochs */
	if (!capfence_class_valid(class_id) || class_id >= CF_V10_CLASSES)
		return false;
	return capfence_rule_narrows(&old_o->rules[class_id],
				     &new_o->rules[class_id]);
}
CF_COMPAT(capfence__v10_epoch_narrows, capfence_epoch_narrows, LIBCAPFENCE_1.0);

enum capfence_reason capfence__v10_decide_delegation(const struct capfence_key *const keys[],
						     size_t nkeys,
						     const struct capfence_token *t,
						     const struct cf_v10_epoch *receiver);
enum capfence_reason capfence__v10_decide_delegation(const struct capfence_key *const keys[],
						     size_t nkeys,
						     const struct capfence_token *t,
						     const struct cf_v10_epoch *receiver)
{
	struct capfence_epoch e;

	/* a token of a class beyond the old layout: denied, as v10_in() has it */
	return capfence_decide_delegation(keys, nkeys, t, v10_in(&e, receiver));
}
CF_COMPAT(capfence__v10_decide_delegation, capfence_decide_delegation, LIBCAPFENCE_1.0);

enum capfence_reason capfence__v10_verifier_decide(struct capfence_verifier *v,
						   const struct capfence_token *t,
						   const struct cf_v10_epoch *receiver);
enum capfence_reason capfence__v10_verifier_decide(struct capfence_verifier *v,
						   const struct capfence_token *t,
						   const struct cf_v10_epoch *receiver)
{
	struct capfence_epoch e;

	return capfence_verifier_decide(v, t, v10_in(&e, receiver));
}
CF_COMPAT(capfence__v10_verifier_decide, capfence_verifier_decide, LIBCAPFENCE_1.0);

int capfence__v10_client_epoch_install(struct capfence_client *c,
				       const struct cf_v10_epoch *o, char *err,
				       size_t errlen);
int capfence__v10_client_epoch_install(struct capfence_client *c,
				       const struct cf_v10_epoch *o, char *err,
				       size_t errlen)
{
	struct capfence_epoch e;

	return capfence_client_epoch_install_opts(c, v10_in(&e, o), NULL, err, errlen);
}
CF_COMPAT(capfence__v10_client_epoch_install, capfence_client_epoch_install, LIBCAPFENCE_1.0);

int capfence__v10_client_epoch_get(struct capfence_client *c, uint64_t epoch_id,
				   struct cf_v10_epoch_info *out, char *err,
				   size_t errlen);
int capfence__v10_client_epoch_get(struct capfence_client *c, uint64_t epoch_id,
				   struct cf_v10_epoch_info *out, char *err,
				   size_t errlen)
{
	struct capfence_epoch_info *i = calloc(1, sizeof(*i));
	int ret;

	memset(out, 0, sizeof(*out));
	if (!i)
		return -ENOMEM;
	ret = capfence__epoch_get(c, epoch_id, i, err, errlen);
	if (!ret)
		v10_info_out(out, i);
	free(i);
	return ret;
}
CF_COMPAT(capfence__v10_client_epoch_get, capfence_client_epoch_get, LIBCAPFENCE_1.0);

int capfence__v10_client_epoch_list(struct capfence_client *c,
				    struct cf_v10_epoch_info **out, size_t *n,
				    char *err, size_t errlen);
int capfence__v10_client_epoch_list(struct capfence_client *c,
				    struct cf_v10_epoch_info **out, size_t *n,
				    char *err, size_t errlen)
{
	struct capfence_epoch_info *v = NULL;
	struct cf_v10_epoch_info *o = NULL;
	size_t cnt = 0, k;
	int ret;

	*out = NULL;
	*n = 0;
	ret = capfence__epoch_list(c, &v, &cnt, err, errlen);
	if (ret)
		return ret;
	if (cnt) {
		o = calloc(cnt, sizeof(*o));
		if (!o) {
			capfence_free(v);
			capfence__seterr(err, errlen, "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
		for (k = 0; k < cnt; k++)
			v10_info_out(&o[k], &v[k]);
	}
	capfence_free(v);
	*out = o;
	*n = cnt;
	return 0;
}
CF_COMPAT(capfence__v10_client_epoch_list, capfence_client_epoch_list, LIBCAPFENCE_1.0);

/* ---- LIBCAPFENCE_1.1 ---- */

int capfence__v11_client_epoch_install_at(struct capfence_client *c,
					  const struct cf_v10_epoch *o,
					  uint64_t rev, char *err, size_t errlen);
int capfence__v11_client_epoch_install_at(struct capfence_client *c,
					  const struct cf_v10_epoch *o,
					  uint64_t rev, char *err, size_t errlen)
{
	struct capfence_epoch e;
	CAPFENCE_OPTS(capfence_change_opts, co, .fleet_rev = rev);

	return capfence_client_epoch_install_opts(c, v10_in(&e, o), &co, err, errlen);
}
CF_COMPAT(capfence__v11_client_epoch_install_at, capfence_client_epoch_install_at, LIBCAPFENCE_1.1);

/* ---- LIBCAPFENCE_1.3 ---- */

int capfence__v13_seccomp_compile(const char *text, size_t len,
				  const struct cf_v10_epoch *o,
				  struct capfence_seccomp **out, char *err,
				  size_t errlen);
int capfence__v13_seccomp_compile(const char *text, size_t len,
				  const struct cf_v10_epoch *o,
				  struct capfence_seccomp **out, char *err,
				  size_t errlen)
{
	struct capfence_epoch e;

	return capfence_seccomp_compile_opts(text, len, v10_in(&e, o), NULL, out, err, errlen);
}
CF_COMPAT(capfence__v13_seccomp_compile, capfence_seccomp_compile, LIBCAPFENCE_1.3);

int capfence__v13_seccomp_compile_file(const char *path,
				       const struct cf_v10_epoch *o,
				       struct capfence_seccomp **out, char *err,
				       size_t errlen);
int capfence__v13_seccomp_compile_file(const char *path,
				       const struct cf_v10_epoch *o,
				       struct capfence_seccomp **out, char *err,
				       size_t errlen)
{
	struct capfence_epoch e;

	return capfence_seccomp_compile_file_opts(path, v10_in(&e, o), NULL, out, err, errlen);
}
CF_COMPAT(capfence__v13_seccomp_compile_file, capfence_seccomp_compile_file, LIBCAPFENCE_1.3);

int capfence__v13_client_epoch_install_seccomp(struct capfence_client *c,
					       const struct cf_v10_epoch *o,
					       const struct capfence_seccomp *s,
					       char *err, size_t errlen);
int capfence__v13_client_epoch_install_seccomp(struct capfence_client *c,
					       const struct cf_v10_epoch *o,
					       const struct capfence_seccomp *s,
					       char *err, size_t errlen)
{
	struct capfence_epoch e;
	CAPFENCE_OPTS(capfence_change_opts, co, .seccomp = s);

	return capfence_client_epoch_install_opts(c, v10_in(&e, o), &co, err, errlen);
}
CF_COMPAT(capfence__v13_client_epoch_install_seccomp,
	  capfence_client_epoch_install_seccomp, LIBCAPFENCE_1.3);

/* ---- the calls the 2 interface left out ---- */

unsigned int capfence_class_slots(void)
{
	return CAPFENCE_CLASS_SLOTS;
}

void capfence_epoch_init(struct capfence_epoch *e, uint64_t epoch_id)
{
	capfence__epoch_init(e, epoch_id);
}
CF_DEFAULT_VERSION(capfence_epoch_init, LIBCAPFENCE_1.4);

int capfence_client_key_install(struct capfence_client *c,
				const struct capfence_key *k, char *err,
				size_t errlen)
{
	return capfence_client_key_install_opts(c, k, NULL, err, errlen);
}

int capfence_client_key_install_at(struct capfence_client *c,
				   const struct capfence_key *k, uint64_t rev,
				   char *err, size_t errlen)
{
	CAPFENCE_OPTS(capfence_change_opts, o, .fleet_rev = rev);

	return capfence_client_key_install_opts(c, k, &o, err, errlen);
}

int capfence_client_key_remove(struct capfence_client *c, uint32_t key_id,
			       char *err, size_t errlen)
{
	return capfence_client_key_remove_opts(c, key_id, NULL, err, errlen);
}

int capfence_client_key_remove_at(struct capfence_client *c, uint32_t key_id,
				  uint64_t rev, char *err, size_t errlen)
{
	CAPFENCE_OPTS(capfence_change_opts, o, .fleet_rev = rev);

	return capfence_client_key_remove_opts(c, key_id, &o, err, errlen);
}

int capfence_client_epoch_install(struct capfence_client *c,
				  const struct capfence_epoch *e, char *err,
				  size_t errlen)
{
	return capfence_client_epoch_install_opts(c, e, NULL, err, errlen);
}
CF_DEFAULT_VERSION(capfence_client_epoch_install, LIBCAPFENCE_1.4);

int capfence_client_epoch_install_at(struct capfence_client *c,
				     const struct capfence_epoch *e,
				     uint64_t rev, char *err, size_t errlen)
{
	CAPFENCE_OPTS(capfence_change_opts, o, .fleet_rev = rev);

	return capfence_client_epoch_install_opts(c, e, &o, err, errlen);
}
CF_DEFAULT_VERSION(capfence_client_epoch_install_at, LIBCAPFENCE_1.4);

int capfence_client_epoch_install_seccomp(struct capfence_client *c,
					  const struct capfence_epoch *e,
					  const struct capfence_seccomp *s,
					  char *err, size_t errlen)
{
	CAPFENCE_OPTS(capfence_change_opts, o, .seccomp = s);

	return capfence_client_epoch_install_opts(c, e, &o, err, errlen);
}
CF_DEFAULT_VERSION(capfence_client_epoch_install_seccomp, LIBCAPFENCE_1.4);

int capfence_client_epoch_activate(struct capfence_client *c,
				   uint64_t epoch_id, char *err,
				   size_t errlen)
{
	return capfence_client_epoch_activate_opts(c, epoch_id, NULL, err, errlen);
}

int capfence_client_epoch_activate_at(struct capfence_client *c,
				      uint64_t epoch_id, uint64_t rev,
				      char *err, size_t errlen)
{
	CAPFENCE_OPTS(capfence_change_opts, o, .fleet_rev = rev);

	return capfence_client_epoch_activate_opts(c, epoch_id, &o, err, errlen);
}

int capfence_client_epoch_retire(struct capfence_client *c, uint64_t epoch_id,
				 char *err, size_t errlen)
{
	return capfence_client_epoch_retire_opts(c, epoch_id, NULL, err, errlen);
}

int capfence_client_epoch_get(struct capfence_client *c, uint64_t epoch_id,
			      struct capfence_epoch_info *out, char *err,
			      size_t errlen)
{
	return capfence__epoch_get(c, epoch_id, out, err, errlen);
}
CF_DEFAULT_VERSION(capfence_client_epoch_get, LIBCAPFENCE_1.4);

int capfence_client_epoch_list(struct capfence_client *c,
			       struct capfence_epoch_info **out, size_t *n,
			       char *err, size_t errlen)
{
	return capfence__epoch_list(c, out, n, err, errlen);
}
CF_DEFAULT_VERSION(capfence_client_epoch_list, LIBCAPFENCE_1.4);

int capfence_seccomp_compile(const char *text, size_t len,
			     const struct capfence_epoch *e,
			     struct capfence_seccomp **out, char *err,
			     size_t errlen)
{
	return capfence_seccomp_compile_opts(text, len, e, NULL, out, err, errlen);
}
CF_DEFAULT_VERSION(capfence_seccomp_compile, LIBCAPFENCE_1.4);

int capfence_seccomp_compile_file(const char *path, const struct capfence_epoch *e,
				  struct capfence_seccomp **out, char *err,
				  size_t errlen)
{
	return capfence_seccomp_compile_file_opts(path, e, NULL, out, err, errlen);
}
CF_DEFAULT_VERSION(capfence_seccomp_compile_file, LIBCAPFENCE_1.4);

int capfence_client_delegate(struct capfence_client *c,
			     const struct capfence_token *t, uint32_t pid,
			     uint32_t from_pid, unsigned int flags,
			     struct capfence_result *r)
{
	/* 1 ignores the flags it does not know; 2 refuses them */
	CAPFENCE_OPTS(capfence_delegate_opts, o, .from_pid = from_pid,
		      .flags = flags & CAPFENCE_DELEGATE_DRY_RUN);

	return capfence_client_delegate_opts(c, t, pid, &o, r);
}

/* 1's message when the mismatch cannot be re-minted: no key */
int capfence_client_delegate_remint(struct capfence_client *c,
				    const struct capfence_key *k,
				    const struct capfence_token *t,
				    uint32_t pid, uint32_t from_pid,
				    struct capfence_result *first,
				    struct capfence_token *reminted,
				    struct capfence_result *r)
{
	CAPFENCE_OPTS(capfence_delegate_opts, o, .from_pid = from_pid,
		      .remint = k, .first = first, .reminted = reminted);
	int ret = capfence_client_delegate_opts(c, t, pid, &o, r);

	if (!k && r->reason == CAPFENCE_R_EPOCH_MISMATCH && r->epoch_id)
		capfence__seterr(r->message, sizeof(r->message),
				 "no key to re-mint under epoch %llu",
				 (unsigned long long)r->epoch_id);
	return ret;
}

int capfence_client_revoke(struct capfence_client *c, uint64_t cap_id,
			   struct capfence_result *r)
{
	return capfence_client_revoke_opts(c, cap_id, NULL, r);
}

int capfence_client_revoke_at(struct capfence_client *c, uint64_t cap_id,
			      uint64_t rev, struct capfence_result *r)
{
	CAPFENCE_OPTS(capfence_change_opts, o, .fleet_rev = rev);

	return capfence_client_revoke_opts(c, cap_id, &o, r);
}

int capfence_client_exec_set(struct capfence_client *c, uint64_t epoch_id,
			     const struct capfence_token *tokens, size_t n,
			     struct capfence_result *r)
{
	CAPFENCE_OPTS(capfence_bind_opts, o, .tokens = tokens, .n = n);

	return capfence_client_exec_set_opts(c, epoch_id, &o, r);
}

int capfence_client_spawn_bound(struct capfence_client *c, uint64_t epoch_id,
				const struct capfence_token *tokens, size_t n,
				const char *path, char *const argv[],
				char *const envp[], pid_t *pid,
				struct capfence_result *r)
{
	CAPFENCE_OPTS(capfence_bind_opts, o, .tokens = tokens, .n = n, .envp = envp);

	return capfence_client_spawn_bound_opts(c, epoch_id, path, argv, &o, pid, r);
}

int capfence_client_learn_verify(struct capfence_client *c, uint64_t epoch_id,
				 const struct capfence_token *tokens, size_t n,
				 const char *path, char *const argv[],
				 unsigned int wait_ms, struct capfence_learn **out,
				 char *err, size_t errlen)
{
	CAPFENCE_OPTS(capfence_bind_opts, o, .tokens = tokens, .n = n,
		      .wait_ms = wait_ms);

	return capfence_client_learn_verify_opts(c, epoch_id, path, argv, &o, out,
						 err, errlen);
}

int capfence_client_fleet_set(struct capfence_client *c,
			      const struct capfence_fleet_set *fs, char *err,
			      size_t errlen)
{
	CAPFENCE_OPTS(capfence_fleet_set_opts, o, .flags = fs->flags, .rev = fs->rev,
		      .stale_ms = fs->stale_ms, .deny_ms = fs->deny_ms,
		      .age_ms = fs->age_ms);

	/* a caller of 1.1 has no asked_ns: read only with the flag of 1.2 */
	if (fs->flags & CAPFENCE_FLEET_SET_ASKED)
		o.asked_ns = fs->asked_ns;
	return capfence_client_fleet_set_opts(c, &o, err, errlen);
}
