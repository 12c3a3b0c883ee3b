// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: an epoch's syscall policy. An OCI runtime-spec linux.seccomp
 * profile (defaultAction, defaultErrnoRet, architectures, flags, syscalls[]
 * with names, action, errnoRet, args), or a container engine's profile file
 * as shipped (moby's default.json, containers-common's seccomp.json: also
 * defaultErrno, archMap, and per rule errno, comment, includes/excludes by
 * arches, caps and minKernel), is compiled with libseccomp into the classic
 * BPF program the module keeps with the epoch. An engine's profile is
 * resolved as the engines resolve it: for x86_64 (Go's "amd64", with the
 * sub-architectures its archMap names), a capability set (the engines'
 * default unless the caller names one) and a kernel version (the running
 * one unless named); a rule whose conditions do not hold is left out, and
 * a name that is a system call of another architecture only is skipped,
 * each with a note. Every refusing action (SCMP_ACT_KILL*, SCMP_ACT_TRAP,
 * SCMP_ACT_TRACE, SCMP_ACT_ERRNO with any errno but ENOSYS) becomes
 * ERRNO(EACCES); ERRNO(ENOSYS) is kept, since it says "no such call" and
 * libc falls back on it (glibc's clone3 -> clone); SCMP_ACT_LOG becomes
 * SCMP_ACT_ALLOW (the kernel would log each such call outside every
 * budget). The program is loaded
 * without SECCOMP_FILTER_FLAG_LOG (the module refuses a bind under a
 * logging one): a denial is EACCES (or that ENOSYS), never a signal, and
 * capfence.ko records it (op=syscall) within the sandbox's audit budget,
 * where the kernel's AUDIT_SECCOMP records would be in none. A profile that denies a system call a class
 * granted by the epoch needs is refused (the class registry, cf_core.c,
 * names those calls). io_uring performs its opcodes' calls out of
 * seccomp's sight: a profile that refuses one of them while it lets
 * io_uring through gets io_uring refused whole, with ENOSYS
 * (uring_policy()).
 *
 * A task bound to the epoch may stack filters of its own above the
 * epoch's (programs that sandbox themselves: sshd, bwrap --seccomp, QEMU
 * -sandbox on). seccomp answers with the most restrictive action of all
 * the filters in the chain, so the epoch's refusals (ERRNO) hold under any
 * filter that allows, logs, traces or notifies; what the task's own filter
 * refuses or kills is its own answer. The module checks at every exec of
 * a bound task that the epoch's program is still in its chain. An epoch
 * installed with no_new_filters keeps the epoch's program the task's only
 * word: stock kernels cannot check a stacked filter at load time
 * (seccomp(2) reaches no LSM hook, prctl(PR_SET_SECCOMP) reaches
 * task_prctl only with the program still in user memory), so the program
 * refuses every new filter itself: seccomp(SECCOMP_SET_MODE_STRICT or
 * _FILTER) and prctl(PR_SET_SECCOMP) answer EACCES (logged) whatever the
 * profile says.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <json-c/json.h>
#include <seccomp.h>
#include <sodium.h>

#include <capfence/capfence.h>
#include "cf_internal.h"

#define CF_SC_MAX_NOTES		256
#define CF_SC_NOTE_LEN		160

struct capfence_seccomp {
	size_t len;				/* program bytes */
	struct sock_filter *prog;
	uint8_t digest[CAPFENCE_SECCOMP_DIGEST_LEN];
	size_t n_notes;
	char (*notes)[CF_SC_NOTE_LEN];		/* one per rewritten rule */
};

/* What a profile's action does, once capfence has rewritten it. */
enum cf_sc_kind { CF_SC_ALLOW, CF_SC_LOG, CF_SC_REFUSE, CF_SC_ENOSYS };

/* Both refuse the call: a class that needs it cannot be granted. */
static bool refuses(enum cf_sc_kind k)
{
	return k == CF_SC_REFUSE || k == CF_SC_ENOSYS;
}

/*
 * The capabilities a container gets unless told otherwise: Docker's
 * default set, which holds Podman's.
 */
static const char cf_sc_default_caps[] =
	"CAP_AUDIT_WRITE,CAP_CHOWN,CAP_DAC_OVERRIDE,CAP_FOWNER,CAP_FSETID,"
	"CAP_KILL,CAP_MKNOD,CAP_NET_BIND_SERVICE,CAP_NET_RAW,CAP_SETFCAP,"
	"CAP_SETGID,CAP_SETPCAP,CAP_SETUID,CAP_SYS_CHROOT";

/* Architectures whose system call names an engine's profile may list. */
static const uint32_t cf_sc_other_arches[] = {
	SCMP_ARCH_AARCH64, SCMP_ARCH_ARM, SCMP_ARCH_S390X, SCMP_ARCH_S390,
	SCMP_ARCH_PPC64LE, SCMP_ARCH_PPC64, SCMP_ARCH_PPC, SCMP_ARCH_MIPS64,
	SCMP_ARCH_MIPSEL64, SCMP_ARCH_MIPS64N32, SCMP_ARCH_MIPS, SCMP_ARCH_RISCV64,
	SCMP_ARCH_X86,
};

static const struct {
	const char *name;
	enum cf_sc_kind kind;
} cf_sc_actions[] = {
	{ "SCMP_ACT_ALLOW", CF_SC_ALLOW },
	{ "SCMP_ACT_LOG", CF_SC_LOG },
	{ "SCMP_ACT_ERRNO", CF_SC_REFUSE },
	{ "SCMP_ACT_KILL", CF_SC_REFUSE },
	{ "SCMP_ACT_KILL_THREAD", CF_SC_REFUSE },
	{ "SCMP_ACT_KILL_PROCESS", CF_SC_REFUSE },
	{ "SCMP_ACT_TRAP", CF_SC_REFUSE },
	{ "SCMP_ACT_TRACE", CF_SC_REFUSE },
};

static const struct {
	const char *name;
	uint32_t arch;
} cf_sc_arches[] = {
	{ "SCMP_ARCH_X86_64", SCMP_ARCH_X86_64 },
	{ "SCMP_ARCH_X86", SCMP_ARCH_X86 },
	{ "SCMP_ARCH_X32", SCMP_ARCH_X32 },
};

static const struct {
	const char *name;
	enum scmp_compare op;
} cf_sc_ops[] = {
	{ "SCMP_CMP_NE", SCMP_CMP_NE }, { "SCMP_CMP_LT", SCMP_CMP_LT },
	{ "SCMP_CMP_LE", SCMP_CMP_LE }, { "SCMP_CMP_EQ", SCMP_CMP_EQ },
	{ "SCMP_CMP_GE", SCMP_CMP_GE }, { "SCMP_CMP_GT", SCMP_CMP_GT },
	{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

/* One syscalls[] entry, as far as the class and io_uring checks need it. */
struct cf_sc_rule {
	struct json_object *names;
	enum cf_sc_kind kind;
	bool has_args;
	struct scmp_arg_cmp cmp[6];	/* for io_uring's calls, added last */
	unsigned int nargs;
};

/*
 * What each io_uring opcode does, as the system calls that do the same
 * (x86_64 names): IORING_OP_* of Linux 6.1 and 6.12, whichever kernel the
 * epoch runs on. Every call that can have the same effect is listed, the
 * legacy ones too (unlink and rmdir for UNLINKAT's do_unlinkat() and
 * do_rmdir(), open and creat for OPENAT's do_filp_open()): a profile that
 * refuses one of them refuses what the opcode does. An opcode that only
 * manages the ring (NOP, cancels, buffers, fixed files, MSG_RING) performs
 * none. Reads and writes are every call of their family, since the opcode
 * takes an offset and RWF_ flags.
 */
#define CF_SC_READS	"read", "pread64", "readv", "preadv", "preadv2"
#define CF_SC_WRITES	"write", "pwrite64", "writev", "pwritev", "pwritev2"
/* a wait on CLOCK_MONOTONIC, _REALTIME or _BOOTTIME, absolute or not */
#define CF_SC_SLEEPS	"nanosleep", "clock_nanosleep"
static const struct {
	const char *op;
	const char *calls[6];
} cf_sc_uring_ops[] = {
	{ "IORING_OP_READV", { CF_SC_READS } },
	{ "IORING_OP_WRITEV", { CF_SC_WRITES } },
	{ "IORING_OP_FSYNC", { "fsync", "fdatasync" } },
	{ "IORING_OP_READ_FIXED", { CF_SC_READS } },
	{ "IORING_OP_WRITE_FIXED", { CF_SC_WRITES } },
	/* readiness of one descriptor */
	{ "IORING_OP_POLL_ADD", { "poll", "ppoll", "select", "pselect6" } },
	{ "IORING_OP_SYNC_FILE_RANGE", { "sync_file_range" } },
	{ "IORING_OP_SENDMSG", { "sendmsg" } },
	{ "IORING_OP_RECVMSG", { "recvmsg" } },
	{ "IORING_OP_TIMEOUT", { CF_SC_SLEEPS } },
	{ "IORING_OP_ACCEPT", { "accept4", "accept" } },
	{ "IORING_OP_LINK_TIMEOUT", { CF_SC_SLEEPS } },
	{ "IORING_OP_CONNECT", { "connect" } },
	{ "IORING_OP_FALLOCATE", { "fallocate" } },
	{ "IORING_OP_OPENAT", { "openat", "open", "creat" } },
	{ "IORING_OP_CLOSE", { "close", "close_range" } },
	/* AT_SYMLINK_NOFOLLOW is lstat, AT_EMPTY_PATH fstat */
	{ "IORING_OP_STATX", { "statx", "newfstatat", "stat", "lstat", "fstat" } },
	{ "IORING_OP_READ", { CF_SC_READS } },
	{ "IORING_OP_WRITE", { CF_SC_WRITES } },
	{ "IORING_OP_FADVISE", { "fadvise64" } },
	{ "IORING_OP_MADVISE", { "madvise" } },
	{ "IORING_OP_SEND", { "sendto" } },
	{ "IORING_OP_RECV", { "recvfrom" } },
	/* an open_how without RESOLVE_ flags is any open */
	{ "IORING_OP_OPENAT2", { "openat2", "openat", "open", "creat" } },
	{ "IORING_OP_EPOLL_CTL", { "epoll_ctl" } },
	{ "IORING_OP_SPLICE", { "splice" } },
	{ "IORING_OP_TEE", { "tee" } },
	{ "IORING_OP_SHUTDOWN", { "shutdown" } },
	{ "IORING_OP_RENAMEAT", { "renameat2", "renameat", "rename" } },
	{ "IORING_OP_UNLINKAT", { "unlinkat", "unlink", "rmdir" } },
	{ "IORING_OP_MKDIRAT", { "mkdirat", "mkdir" } },
	{ "IORING_OP_SYMLINKAT", { "symlinkat", "symlink" } },
	{ "IORING_OP_LINKAT", { "linkat", "link" } },
	{ "IORING_OP_FSETXATTR", { "fsetxattr" } },
	/* the path is followed: the l- calls' effect on anything but a link */
	{ "IORING_OP_SETXATTR", { "setxattr", "lsetxattr" } },
	{ "IORING_OP_FGETXATTR", { "fgetxattr" } },
	{ "IORING_OP_GETXATTR", { "getxattr", "lgetxattr" } },
	{ "IORING_OP_SOCKET", { "socket" } },
	/* a file's own command (ioctl); on a socket, its options too */
	{ "IORING_OP_URING_CMD", { "ioctl", "getsockopt", "setsockopt" } },
	{ "IORING_OP_SEND_ZC", { "sendto" } },
	{ "IORING_OP_SENDMSG_ZC", { "sendmsg" } },
	/* 6.7 and later */
	{ "IORING_OP_READ_MULTISHOT", { CF_SC_READS } },
	/* P_PID, P_PGID, P_ALL: what wait4 reaps too */
	{ "IORING_OP_WAITID", { "waitid", "wait4" } },
	{ "IORING_OP_FUTEX_WAIT", { "futex" } },
	{ "IORING_OP_FUTEX_WAKE", { "futex" } },
	{ "IORING_OP_FUTEX_WAITV", { "futex_waitv" } },
	/*
	 * a fixed file into the task's table at its lowest free number,
	 * close-on-exec unless asked (receive_fd()): a dup of it
	 */
	{ "IORING_OP_FIXED_FD_INSTALL", { "dup", "dup2", "dup3", "fcntl" } },
	{ "IORING_OP_FTRUNCATE", { "ftruncate" } },
	{ "IORING_OP_BIND", { "bind" } },
	{ "IORING_OP_LISTEN", { "listen" } },
};

/* io_uring's own calls: refused together, or the profile's rules on them. */
static const char *const cf_sc_uring_calls[] = {
	"io_uring_setup", "io_uring_enter", "io_uring_register",
};

struct cf_sc_build {
	scmp_filter_ctx ctx;
	struct capfence_seccomp *s;
	enum cf_sc_kind def;
	struct cf_sc_rule *rules;
	size_t n_rules;
	char *err;
	size_t errlen;
	const char *caps;	/* comma-separated CAP_ names */
	int kmaj, kmin;		/* for minKernel */
	bool no_new_filters;	/* the program refuses new filters itself */
};

static const char *errno_text(int e)
{
	const char *n = e > 0 ? strerrorname_np(e) : NULL;

	return n ?: "?";
}

/* The errno named @name ("EPERM"), or -1. */
static int errno_by_name(const char *name)
{
	int e;

	for (e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);

		if (n && !strcmp(n, name))
			return e;
	}
	return -1;
}

static int note(struct cf_sc_build *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int note(struct cf_sc_build *b, const char *fmt, ...)
{
	va_list ap;

	if (b->s->n_notes == CF_SC_MAX_NOTES)
		return 0;
	va_start(ap, fmt);
	vsnprintf(b->s->notes[b->s->n_notes++], CF_SC_NOTE_LEN, fmt, ap);
	va_end(ap);
	return 0;
}

/*
 * The action of an object with "action"/"errnoRet" (a rule) or
 * "defaultAction"/"defaultErrnoRet" (the profile): its kind, and a note
 * when capfence rewrites it.
 */
static int get_action(struct cf_sc_build *b, struct json_object *o,
		      const char *akey, const char *ekey, const char *nkey,
		      const char *where, const char *what, enum cf_sc_kind *kind)
{
	struct json_object *a, *en, *nm;
	const char *name;
	int64_t eno = -1;
	size_t i;

	if (!json_object_object_get_ex(o, akey, &a) ||
	    !json_object_is_type(a, json_type_string)) {
		capfence__seterr(b->err, b->errlen, "profile: %s: %s must be a string",
				 where, akey);
		return -EINVAL;
	}
	name = json_object_get_string(a);
	if (json_object_object_get_ex(o, ekey, &en)) {
		if (!json_object_is_type(en, json_type_int) ||
		    (eno = json_object_get_int64(en)) < 0 || eno > 4095) {
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: %s must be an errno (0 to 4095)",
					 where, ekey);
			return -EINVAL;
		}
	}
	/* the engines' errno by name, beside (or instead of) its number */
	if (json_object_object_get_ex(o, nkey, &nm)) {
		int byname = json_object_is_type(nm, json_type_string) ?
			     errno_by_name(json_object_get_string(nm)) : -1;

		if (byname < 0 || (eno >= 0 && eno != byname)) {
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: %s must name an errno (EPERM, ENOSYS, ...)%s",
					 where, nkey, byname >= 0 ? " that agrees with its number" : "");
			return -EINVAL;
		}
		eno = byname;
	}
	for (i = 0; i < sizeof(cf_sc_actions) / sizeof(cf_sc_actions[0]); i++)
		if (!strcmp(name, cf_sc_actions[i].name))
			break;
	if (i == sizeof(cf_sc_actions) / sizeof(cf_sc_actions[0])) {
		if (!strcmp(name, "SCMP_ACT_NOTIFY"))
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: unsupported action 'SCMP_ACT_NOTIFY' (capfence answers every refusal itself)",
					 where);
		else
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: unknown action '%.64s'", where, name);
		return -EINVAL;
	}
	*kind = cf_sc_actions[i].kind;
	/*
	 * The kernel writes an AUDIT_SECCOMP record of every call a filter
	 * answers SCMP_ACT_LOG, outside every sandbox's audit budget: the
	 * call is allowed, unlogged.
	 */
	if (*kind == CF_SC_LOG) {
		*kind = CF_SC_ALLOW;
		return note(b, "%s: SCMP_ACT_LOG -> SCMP_ACT_ALLOW (the kernel's records of it would be outside every audit budget)",
			    what);
	}
	if (*kind != CF_SC_REFUSE)
		return 0;
	/* OCI: SCMP_ACT_ERRNO without errnoRet is EPERM */
	if (!strcmp(name, "SCMP_ACT_ERRNO")) {
		if (eno == EACCES)
			return 0;
		if (eno == ENOSYS) {
			*kind = CF_SC_ENOSYS;
			return note(b, "%s: SCMP_ACT_ERRNO(ENOSYS) kept (no such call: libc falls back)",
				    what);
		}
		return note(b, "%s: SCMP_ACT_ERRNO(%s) -> SCMP_ACT_ERRNO(EACCES)",
			    what, errno_text(eno < 0 ? EPERM : (int)eno));
	}
	return note(b, "%s: %s -> SCMP_ACT_ERRNO(EACCES)", what, name);
}

static uint32_t scmp_action(enum cf_sc_kind k)
{
	return k == CF_SC_ALLOW ? SCMP_ACT_ALLOW :
	       k == CF_SC_ENOSYS ? SCMP_ACT_ERRNO(ENOSYS) : SCMP_ACT_ERRNO(EACCES);
}

static int get_u64(struct json_object *o, const char *key, bool need,
		   uint64_t *v)
{
	struct json_object *x;

	*v = 0;
	if (!json_object_object_get_ex(o, key, &x))
		return need ? -EINVAL : 0;
	if (!json_object_is_type(x, json_type_int))
		return -EINVAL;
	if (json_object_get_int64(x) < 0 && json_object_get_uint64(x) <= INT64_MAX)
		return -EINVAL;
	*v = json_object_get_uint64(x);
	return 0;
}

static int get_args(struct cf_sc_build *b, struct json_object *args,
		    const char *where, struct scmp_arg_cmp *cmp,
		    unsigned int *n)
{
	size_t i, j, len;

	*n = 0;
	if (!json_object_is_type(args, json_type_array) ||
	    (len = json_object_array_length(args)) > 6) {
		capfence__seterr(b->err, b->errlen,
				 "profile: %s: args must be an array of at most 6 conditions",
				 where);
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		struct json_object *a = json_object_array_get_idx(args, i), *op;
		uint64_t index, value, two;

		if (!json_object_is_type(a, json_type_object) ||
		    get_u64(a, "index", true, &index) || index > 5 ||
		    get_u64(a, "value", true, &value) ||
		    get_u64(a, "valueTwo", false, &two) ||
		    !json_object_object_get_ex(a, "op", &op) ||
		    !json_object_is_type(op, json_type_string)) {
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: args[%zu] needs index (0 to 5), value, op and an optional valueTwo, all unsigned",
					 where, i);
			return -EINVAL;
		}
		for (j = 0; j < sizeof(cf_sc_ops) / sizeof(cf_sc_ops[0]); j++)
			if (!strcmp(json_object_get_string(op), cf_sc_ops[j].name))
				break;
		if (j == sizeof(cf_sc_ops) / sizeof(cf_sc_ops[0])) {
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: args[%zu]: unknown op '%.64s'",
					 where, i, json_object_get_string(op));
			return -EINVAL;
		}
		cmp[i].arg = (unsigned int)index;
		cmp[i].op = cf_sc_ops[j].op;
		cmp[i].datum_a = value;
		cmp[i].datum_b = two;
	}
	*n = (unsigned int)len;
	return 0;
}

static bool only_keys(struct json_object *o, const char *const *keys,
		      const char **bad)
{
	json_object_object_foreach(o, k, v) {
		const char *const *p;

		(void)v;
		for (p = keys; *p; p++)
			if (!strcmp(k, *p))
				break;
		if (!*p) {
			*bad = k;
			return false;
		}
	}
	return true;
}

/*
 * The calls that would stack a filter or enter strict mode, as conditions
 * on argument 0 of seccomp(2) and prctl(2); see the top of this file.
 */
static bool is_seccomp_call(const char *name)
{
	return !strcmp(name, "seccomp") || !strcmp(name, "prctl");
}

/*
 * The kernel reads argument 0 of seccomp(2) (unsigned int op) and prctl(2)
 * (int option) as 32 bits: a condition on all 64 would let a caller set
 * the upper half and slip past it. Every condition here is a masked
 * equality whose mask covers the upper half (which must be zero) and the
 * bits of the lower half it fixes.
 */
static struct scmp_arg_cmp arg0_prefix(uint32_t value, unsigned int low_bits)
{
	uint64_t keep = low_bits >= 32 ? 0 : ~0ull << low_bits;

	return (struct scmp_arg_cmp){ .arg = 0, .op = SCMP_CMP_MASKED_EQ,
				      .datum_a = keep, .datum_b = value };
}

/*
 * The conditions on argument 0 under which @name is allowed, one rule
 * each: seccomp(2)'s queries (GET_ACTION_AVAIL, GET_NOTIF_SIZES); prctl(2)
 * with any option but PR_SET_SECCOMP, as the aligned blocks that cover
 * [0, 2^32) less that one value. Returns their number.
 */
static unsigned int allowed_arg0(const char *name, struct scmp_arg_cmp *out)
{
	unsigned int n = 0, bit;

	if (!strcmp(name, "seccomp")) {
		out[n++] = arg0_prefix(SECCOMP_GET_ACTION_AVAIL, 0);
		out[n++] = arg0_prefix(SECCOMP_GET_NOTIF_SIZES, 0);
		return n;
	}
	/* for each bit, the block that differs from PR_SET_SECCOMP there first */
	for (bit = 0; bit < 32; bit++) {
		uint32_t flip = (uint32_t)PR_SET_SECCOMP ^ (1u << bit);

		out[n++] = arg0_prefix(flip & ~((1u << bit) - 1), bit);
	}
	return n;
}

/*
 * An allowing rule of the profile on seccomp(2) or prctl(2): allowed only
 * when argument 0 does not install a filter (one rule per block of
 * allowed values).
 */
static int add_allowing_seccomp_call(struct cf_sc_build *b, const char *where,
				     const char *name, uint32_t action,
				     struct scmp_arg_cmp *cmp, unsigned int nargs)
{
	struct scmp_arg_cmp all[7], allowed[32];
	unsigned int i, k, n;
	int ret = 0;

	for (i = 0; i < nargs; i++) {
		if (cmp[i].arg == 0) {
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: conditions on argument 0 of %s are not supported (capfence refuses new seccomp filters there itself)",
					 where, name);
			return -EINVAL;
		}
		all[i] = cmp[i];
	}
	n = allowed_arg0(name, allowed);
	for (k = 0; k < n && !ret; k++) {
		all[nargs] = allowed[k];
		ret = seccomp_rule_add_array(b->ctx, action,
					     seccomp_syscall_resolve_name(name),
					     nargs + 1, all);
	}
	if (ret) {
		capfence__seterr(b->err, b->errlen,
				 "profile: %s: libseccomp refused the rule for '%s': %s",
				 where, name, strerror(-ret));
		return -EINVAL;
	}
	return 0;
}

/*
 * With no_new_filters, refuse new filters when the default lets seccomp(2)
 * and prctl(2) through (a refusing default already refuses what no rule
 * allows): SET_MODE_STRICT, SET_MODE_FILTER and PR_SET_SECCOMP, on the
 * lower 32 bits of argument 0 with any upper half.
 */
static int refuse_new_filters(struct cf_sc_build *b)
{
	struct scmp_arg_cmp strict = { .arg = 0, .op = SCMP_CMP_MASKED_EQ,
				       .datum_a = 0xffffffffu,
				       .datum_b = SECCOMP_SET_MODE_STRICT };
	struct scmp_arg_cmp filter = strict, pr = strict;
	int ret;

	if (!b->no_new_filters || refuses(b->def))
		return 0;
	filter.datum_b = SECCOMP_SET_MODE_FILTER;
	pr.datum_b = PR_SET_SECCOMP;
	ret = seccomp_rule_add_array(b->ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(seccomp), 1, &strict) ?:
	      seccomp_rule_add_array(b->ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(seccomp), 1, &filter) ?:
	      seccomp_rule_add_array(b->ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(prctl), 1, &pr);
	if (ret)
		capfence__seterr(b->err, b->errlen,
				 "profile: libseccomp refused capfence's rule on new filters: %s",
				 strerror(-ret));
	return ret ? -EINVAL : 0;
}

static bool has_cap(const struct cf_sc_build *b, const char *cap)
{
	size_t n = strlen(cap);
	const char *p = b->caps;

	while ((p = strstr(p, cap))) {
		if ((p == b->caps || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
		p += n;
	}
	return false;
}

/*
 * The capability names an engine's "caps" condition may name (those of
 * <linux/capability.h> up to CAP_CHECKPOINT_RESTORE); a name outside them
 * in --seccomp-caps is a typo that would silently resolve rules wrong.
 */
static const char *const cf_sc_cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
	"CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
	"CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

/* 0 when @caps is empty or comma-separated names of cf_sc_cap_names. */
static int check_caps(const char *caps, char *err, size_t errlen)
{
	const char *p = caps;

	while (*p) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < sizeof(cf_sc_cap_names) / sizeof(cf_sc_cap_names[0]); i++)
			if (strlen(cf_sc_cap_names[i]) == n &&
			    !strncmp(p, cf_sc_cap_names[i], n))
				break;
		if (i == sizeof(cf_sc_cap_names) / sizeof(cf_sc_cap_names[0])) {
			capfence__seterr(err, errlen,
					 "profile: '%.*s' is not a capability name (CAP_CHOWN, CAP_SYS_ADMIN, ...; comma-separated)",
					 (int)(n > 32 ? 32 : n), p);
			return -EINVAL;
		}
		p += n;
		if (*p == ',' && *++p == '\0')
			break;
	}
	return 0;
}

/* Is this kernel at least @v ("MAJOR.MINOR")? -1 for a malformed @v. */
static int kernel_at_least(const struct cf_sc_build *b, const char *v)
{
	int maj, min = 0;

	if (sscanf(v, "%d.%d", &maj, &min) < 1)
		return -1;
	return b->kmaj > maj || (b->kmaj == maj && b->kmin >= min);
}

/*
 * An engine's condition on a rule, "includes" (every field must hold) or
 * "excludes" (no field may): 1 when the rule stays, 0 when it is left out
 * (@why says why), or -EINVAL.
 */
static int rule_cond(struct cf_sc_build *b, struct json_object *r,
		     const char *key, const char *where, char *why, size_t len)
{
	static const char *const keys[] = { "arches", "caps", "minKernel", NULL };
	bool inc = !strcmp(key, "includes");
	struct json_object *c, *x;
	const char *bad;
	size_t i, n;

	if (!json_object_object_get_ex(r, key, &c) || !c)
		return 1;
	if (!json_object_is_type(c, json_type_object) || !only_keys(c, keys, &bad)) {
		capfence__seterr(b->err, b->errlen,
				 "profile: %s: %s must be an object of arches, caps and minKernel",
				 where, key);
		return -EINVAL;
	}
	if (json_object_object_get_ex(c, "arches", &x)) {
		bool amd64 = false;

		if (!json_object_is_type(x, json_type_array))
			goto bad;
		n = json_object_array_length(x);
		for (i = 0; i < n; i++) {
			const char *a = json_object_get_string(json_object_array_get_idx(x, i));

			amd64 |= a && !strcmp(a, "amd64");
		}
		if (n && inc && !amd64) {
			snprintf(why, len, "only for other architectures than amd64");
			return 0;
		}
		if (!inc && amd64) {
			snprintf(why, len, "excluded on amd64");
			return 0;
		}
	}
	if (json_object_object_get_ex(c, "caps", &x)) {
		if (!json_object_is_type(x, json_type_array))
			goto bad;
		n = json_object_array_length(x);
		for (i = 0; i < n; i++) {
			const char *cap = json_object_get_string(json_object_array_get_idx(x, i));

			if (!cap)
				goto bad;
			if (inc && !has_cap(b, cap)) {
				snprintf(why, len, "needs %.40s", cap);
				return 0;
			}
			if (!inc && has_cap(b, cap)) {
				snprintf(why, len, "excluded with %.40s", cap);
				return 0;
			}
		}
	}
	if (json_object_object_get_ex(c, "minKernel", &x)) {
		int at = json_object_is_type(x, json_type_string) ?
			 kernel_at_least(b, json_object_get_string(x)) : -1;

		if (at < 0)
			goto bad;
		if (inc != !!at) {
			snprintf(why, len, "%s kernel %.16s", inc ? "needs" : "excluded from",
				 json_object_get_string(x));
			return 0;
		}
	}
	return 1;
bad:
	capfence__seterr(b->err, b->errlen,
			 "profile: %s: %s: arches and caps must be arrays of names, minKernel a version",
			 where, key);
	return -EINVAL;
}

static bool is_uring_call(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cf_sc_uring_calls) / sizeof(cf_sc_uring_calls[0]); i++)
		if (!strcmp(name, cf_sc_uring_calls[i]))
			return true;
	return false;
}

/* A name libseccomp knows on another architecture only: skipped. */
static bool other_arch_call(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cf_sc_other_arches) / sizeof(cf_sc_other_arches[0]); i++)
		if (seccomp_syscall_resolve_name_arch(cf_sc_other_arches[i], name) !=
		    __NR_SCMP_ERROR)
			return true;
	return false;
}

static int add_rule(struct cf_sc_build *b, struct json_object *r, size_t idx)
{
	static const char *const keys[] = {
		"names", "action", "errnoRet", "errno", "args", "comment",
		"includes", "excludes", NULL
	};
	char why[64];
	struct scmp_arg_cmp cmp[6];
	struct json_object *names, *args, *first;
	char where[32], what[CF_SC_NOTE_LEN];
	struct cf_sc_rule *rule = &b->rules[idx];
	char first_foreign[48] = "";
	unsigned int nargs = 0;
	size_t i, n, foreign = 0;
	const char *bad;
	int ret;

	snprintf(where, sizeof(where), "syscalls[%zu]", idx);
	if (!json_object_is_type(r, json_type_object)) {
		capfence__seterr(b->err, b->errlen, "profile: %s is not an object", where);
		return -EINVAL;
	}
	if (!only_keys(r, keys, &bad)) {
		capfence__seterr(b->err, b->errlen, "profile: %s: unknown key '%.64s'",
				 where, bad);
		return -EINVAL;
	}
	if (!json_object_object_get_ex(r, "names", &names) ||
	    !json_object_is_type(names, json_type_array) ||
	    !(n = json_object_array_length(names))) {
		capfence__seterr(b->err, b->errlen,
				 "profile: %s: names must be a non-empty array of system call names",
				 where);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		struct json_object *nm = json_object_array_get_idx(names, i);

		if (!json_object_is_type(nm, json_type_string)) {
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: names[%zu] is not a string", where, i);
			return -EINVAL;
		}
		if (seccomp_syscall_resolve_name(json_object_get_string(nm)) ==
		    __NR_SCMP_ERROR && !other_arch_call(json_object_get_string(nm))) {
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: unknown syscall '%.64s'", where,
					 json_object_get_string(nm));
			return -EINVAL;
		}
	}
	first = json_object_array_get_idx(names, 0);
	snprintf(what, sizeof(what), "%s (%.40s%s)", where,
		 json_object_get_string(first), n > 1 ? ", ..." : "");
	ret = rule_cond(b, r, "includes", where, why, sizeof(why));
	if (ret > 0)
		ret = rule_cond(b, r, "excludes", where, why, sizeof(why));
	if (ret < 0)
		return ret;
	if (!ret)
		return note(b, "%s: left out (%s)", what, why);
	ret = get_action(b, r, "action", "errnoRet", "errno", where, what,
			 &rule->kind);
	if (ret)
		return ret;
	/* the engines write "args": null for a rule without conditions */
	if (json_object_object_get_ex(r, "args", &args) && args) {
		ret = get_args(b, args, where, cmp, &nargs);
		if (ret)
			return ret;
	}
	rule->names = names;
	rule->has_args = nargs > 0;
	memcpy(rule->cmp, cmp, sizeof(cmp[0]) * nargs);
	rule->nargs = nargs;
	/* a rule that does what the default does changes nothing (and
	 * libseccomp refuses it) */
	if (rule->kind == b->def)
		return 0;
	for (i = 0; i < n; i++) {
		const char *nm = json_object_get_string(json_object_array_get_idx(names, i));

		/* a call of another architecture: not in an x86_64 filter */
		if (seccomp_syscall_resolve_name(nm) < 0) {
			if (!foreign++)
				snprintf(first_foreign, sizeof(first_foreign), "%s", nm);
			continue;
		}
		/* added by uring_policy() once the whole profile is known */
		if (is_uring_call(nm))
			continue;
		if (b->no_new_filters && is_seccomp_call(nm)) {
			/* refusing: kept; allowing: never a new filter */
			if (refuses(rule->kind))
				goto plain;
			/* the default allows: refuse_new_filters() does it */
			if (!refuses(b->def))
				continue;
			ret = add_allowing_seccomp_call(b, where, nm,
							scmp_action(rule->kind),
							cmp, nargs);
			if (ret)
				return ret;
			continue;
		}
plain:
		ret = seccomp_rule_add_array(b->ctx, scmp_action(rule->kind),
					     seccomp_syscall_resolve_name(nm),
					     nargs, cmp);
		if (ret) {
			capfence__seterr(b->err, b->errlen,
					 "profile: %s: libseccomp refused the rule for '%.64s': %s",
					 where, nm, strerror(-ret));
			return -EINVAL;
		}
	}
	if (foreign)
		note(b, "%s: %zu name%s left out (not x86_64 system calls: %s%s)",
		     where, foreign, foreign > 1 ? "s" : "", first_foreign,
		     foreign > 1 ? ", ..." : "");
	return 0;
}

/*
 * Does the profile let @name through whatever its arguments? Refused by a
 * rule naming it (with conditions or not), or by the default unless a rule
 * without conditions allows it.
 */
static const char *denies(const struct cf_sc_build *b, const char *name,
			  size_t *which)
{
	bool allowed = false;
	size_t i, j;

	for (i = 0; i < b->n_rules; i++) {
		const struct cf_sc_rule *r = &b->rules[i];
		size_t n = r->names ? json_object_array_length(r->names) : 0;

		for (j = 0; j < n; j++) {
			if (strcmp(name, json_object_get_string(json_object_array_get_idx(r->names, j))))
				continue;
			if (refuses(r->kind)) {
				*which = i;
				return "a rule";
			}
			if (!r->has_args)
				allowed = true;
		}
	}
	if (refuses(b->def) && !allowed)
		return "the default action";
	return NULL;
}

/* Does some rule, or the default, let @name through for some arguments? */
static bool allows_some(const struct cf_sc_build *b, const char *name)
{
	bool refused_always = false;
	size_t i, j;

	for (i = 0; i < b->n_rules; i++) {
		const struct cf_sc_rule *r = &b->rules[i];
		size_t n = r->names ? json_object_array_length(r->names) : 0;

		for (j = 0; j < n; j++) {
			if (strcmp(name, json_object_get_string(json_object_array_get_idx(r->names, j))))
				continue;
			if (!refuses(r->kind))
				return true;
			refused_always |= !r->has_args;
		}
	}
	return !refuses(b->def) && !refused_always;
}

/*
 * io_uring performs its opcodes' calls without passing through seccomp.
 * When the profile refuses (for some arguments, or by its default) a call
 * an opcode performs, and lets io_uring through, io_uring is refused
 * whole: io_uring_setup, and io_uring_enter and io_uring_register for a
 * ring made before the bind, answer ENOSYS (as a kernel without io_uring;
 * programs fall back on it). Otherwise the profile's own rules on the
 * three calls are added as written.
 */
static int uring_policy(struct cf_sc_build *b)
{
	char why[CF_SC_NOTE_LEN] = "";
	const char *named[3] = { NULL };
	size_t i, j, k, n = 0, more = 0, len = 0;
	bool reachable = false;
	int ret = 0;

	for (i = 0; i < sizeof(cf_sc_uring_calls) / sizeof(cf_sc_uring_calls[0]); i++)
		reachable |= allows_some(b, cf_sc_uring_calls[i]);
	for (i = 0; reachable && i < sizeof(cf_sc_uring_ops) / sizeof(cf_sc_uring_ops[0]); i++) {
		for (j = 0; j < 6 && cf_sc_uring_ops[i].calls[j]; j++) {
			const char *c = cf_sc_uring_ops[i].calls[j];
			size_t which;

			if (!denies(b, c, &which))
				continue;
			for (k = 0; k < n && strcmp(named[k], c); k++)
				;
			if (k < n)
				continue;
			/* the first few that fit the note */
			if (n == 3 || (n && len + strlen(c) + strlen(cf_sc_uring_ops[i].op) > 100)) {
				more++;
				continue;
			}
			named[n++] = c;
			len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%s (%s)",
						n > 1 ? ", " : "", c, cf_sc_uring_ops[i].op);
		}
	}
	if (n) {
		for (i = 0; i < sizeof(cf_sc_uring_calls) / sizeof(cf_sc_uring_calls[0]) && !ret; i++)
			if (b->def != CF_SC_ENOSYS)
				ret = seccomp_rule_add(b->ctx, SCMP_ACT_ERRNO(ENOSYS),
						       seccomp_syscall_resolve_name(cf_sc_uring_calls[i]),
						       0);
		if (!ret)
			note(b, "io_uring refused (ENOSYS): the profile refuses %s%s", why,
			     more ? ", ..." : "");
	}
	for (i = 0; !n && i < b->n_rules && !ret; i++) {
		const struct cf_sc_rule *r = &b->rules[i];
		size_t nn = r->names ? json_object_array_length(r->names) : 0;

		if (r->kind == b->def)
			continue;
		for (j = 0; j < nn && !ret; j++) {
			const char *nm = json_object_get_string(json_object_array_get_idx(r->names, j));

			if (is_uring_call(nm))
				ret = seccomp_rule_add_array(b->ctx, scmp_action(r->kind),
							     seccomp_syscall_resolve_name(nm),
							     r->nargs, r->cmp);
		}
	}
	if (ret)
		capfence__seterr(b->err, b->errlen,
				 "profile: libseccomp refused the rule on io_uring: %s",
				 strerror(-ret));
	return ret ? -EINVAL : 0;
}

/*
 * A class's newer calls that libc and programs probe and, answered ENOSYS,
 * replace with an older call of the same class: such an answer leaves the
 * class usable as long as the older call is let through.
 */
static const struct {
	const char *call, *fallback;
} cf_sc_fallbacks[] = {
	{ "openat2", "openat" },
	{ "renameat2", "renameat" },
};

/* @name is refused with ENOSYS (rule @which, or the default) and has an
 * older call of its class that the profile lets through. */
static bool falls_back(const struct cf_sc_build *b, const char *name,
		       const char *why, size_t which)
{
	enum cf_sc_kind k = strcmp(why, "a rule") ? b->def : b->rules[which].kind;
	size_t i, w;

	if (k != CF_SC_ENOSYS)
		return false;
	for (i = 0; i < sizeof(cf_sc_fallbacks) / sizeof(cf_sc_fallbacks[0]); i++)
		if (!strcmp(name, cf_sc_fallbacks[i].call))
			return !denies(b, cf_sc_fallbacks[i].fallback, &w);
	return false;
}

static int check_classes(struct cf_sc_build *b, const struct capfence_epoch *e)
{
	static const char *const kinds[] = { "deny", "open", "token", "log" };
	int c;

	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++) {
		const char *const *sys = capfence__class_syscalls(c);
		const struct capfence_rule *r = &e->rules[c];
		size_t which = 0;
		const char *why;

		if (r->kind == CAPFENCE_RULE_DENY)
			continue;
		for (; *sys; sys++) {
			why = denies(b, *sys, &which);
			if (!why)
				continue;
			if (falls_back(b, *sys, why, which)) {
				note(b, "%s answered ENOSYS: class %s falls back to the older call",
				     *sys, capfence_class_name(c));
				continue;
			}
			if (!strcmp(why, "a rule"))
				capfence__seterr(b->err, b->errlen,
						 "profile: syscalls[%zu] denies %s, which class %s needs, and epoch %" PRIu64 " grants %s (%s): allow the call or deny the class",
						 which, *sys, capfence_class_name(c), e->epoch_id,
						 capfence_class_name(c), kinds[r->kind < 4 ? r->kind : 0]);
			else
				capfence__seterr(b->err, b->errlen,
						 "profile: the default action denies %s, which class %s needs, and epoch %" PRIu64 " grants %s (%s): allow the call or deny the class",
						 *sys, capfence_class_name(c), e->epoch_id,
						 capfence_class_name(c), kinds[r->kind < 4 ? r->kind : 0]);
			return -EINVAL;
		}
	}
	return 0;
}

static int add_arches(struct cf_sc_build *b, struct json_object *a)
{
	size_t i, j, n;
	int ret;

	if (!json_object_is_type(a, json_type_array)) {
		capfence__seterr(b->err, b->errlen,
				 "profile: architectures must be an array of SCMP_ARCH_* names");
		return -EINVAL;
	}
	n = json_object_array_length(a);
	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(a, i);
		const char *name = json_object_is_type(x, json_type_string) ?
				   json_object_get_string(x) : "(not a string)";

		for (j = 0; j < sizeof(cf_sc_arches) / sizeof(cf_sc_arches[0]); j++)
			if (!strcmp(name, cf_sc_arches[j].name))
				break;
		if (j == sizeof(cf_sc_arches) / sizeof(cf_sc_arches[0])) {
			capfence__seterr(b->err, b->errlen,
					 "profile: unsupported architecture '%.64s' (supported: SCMP_ARCH_X86_64, SCMP_ARCH_X86, SCMP_ARCH_X32)",
					 name);
			return -EINVAL;
		}
		if (cf_sc_arches[j].arch == SCMP_ARCH_X86_64)
			continue;	/* native: always in the filter */
		ret = seccomp_arch_add(b->ctx, cf_sc_arches[j].arch);
		if (ret && ret != -EEXIST) {
			capfence__seterr(b->err, b->errlen,
					 "profile: libseccomp refused architecture %s: %s",
					 name, strerror(-ret));
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * "architectures" (OCI), or an engine's "archMap": x86_64's entry and the
 * sub-architectures it names, as the engines take it on x86_64.
 */
static int get_arches(struct cf_sc_build *b, struct json_object *root)
{
	struct json_object *a, *m;
	size_t i, n;

	if (json_object_object_get_ex(root, "architectures", &a)) {
		if (json_object_object_get_ex(root, "archMap", &m)) {
			capfence__seterr(b->err, b->errlen,
					 "profile: both architectures and archMap (an engine takes one or the other)");
			return -EINVAL;
		}
		return add_arches(b, a);
	}
	if (!json_object_object_get_ex(root, "archMap", &m))
		return 0;
	if (!json_object_is_type(m, json_type_array))
		goto bad;
	n = json_object_array_length(m);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(m, i), *arch, *subs;

		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "architecture", &arch) ||
		    !json_object_is_type(arch, json_type_string))
			goto bad;
		if (strcmp(json_object_get_string(arch), "SCMP_ARCH_X86_64"))
			continue;
		if (!json_object_object_get_ex(e, "subArchitectures", &subs))
			return 0;
		return add_arches(b, subs);
	}
	return 0;
bad:
	capfence__seterr(b->err, b->errlen,
			 "profile: archMap must be an array of {architecture, subArchitectures}");
	return -EINVAL;
}

static int get_flags(struct cf_sc_build *b, struct json_object *root)
{
	struct json_object *f;
	size_t i, n;

	if (!json_object_object_get_ex(root, "flags", &f))
		return 0;
	if (!json_object_is_type(f, json_type_array)) {
		capfence__seterr(b->err, b->errlen, "profile: flags must be an array");
		return -EINVAL;
	}
	n = json_object_array_length(f);
	for (i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(f, i));

		/*
		 * capfence records every refusal itself, within the budgets:
		 * the log flag is accepted and has no effect
		 */
		if (!s || strcmp(s, "SECCOMP_FILTER_FLAG_LOG")) {
			capfence__seterr(b->err, b->errlen,
					 "profile: unsupported flag '%.64s' (only SECCOMP_FILTER_FLAG_LOG, which capfence replaces with records of its own)",
					 s ?: "(not a string)");
			return -EINVAL;
		}
	}
	return 0;
}

static int export_prog(struct cf_sc_build *b)
{
	struct stat st;
	size_t got;
	ssize_t n;
	int fd, ret;

	fd = memfd_create("capfence-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		capfence__seterr(b->err, b->errlen, "profile: memfd_create: %s", strerror(-ret));
		return ret;
	}
	ret = seccomp_export_bpf(b->ctx, fd);
	if (ret) {
		capfence__seterr(b->err, b->errlen, "profile: libseccomp cannot export the program: %s",
				 strerror(-ret));
		goto out;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if (!st.st_size || st.st_size % sizeof(struct sock_filter)) {
		capfence__seterr(b->err, b->errlen, "profile: libseccomp exported a malformed program");
		ret = -EINVAL;
		goto out;
	}
	if ((size_t)st.st_size / sizeof(struct sock_filter) > CAPFENCE_SECCOMP_MAX_INSNS) {
		capfence__seterr(b->err, b->errlen,
				 "profile: compiles to %zu instructions, more than the %d a seccomp program may have",
				 (size_t)st.st_size / sizeof(struct sock_filter),
				 CAPFENCE_SECCOMP_MAX_INSNS);
		ret = -E2BIG;
		goto out;
	}
	b->s->prog = malloc((size_t)st.st_size);
	if (!b->s->prog) {
		ret = -ENOMEM;
		goto out;
	}
	/* a read may return less than asked, or be interrupted */
	for (got = 0; got < (size_t)st.st_size; got += (size_t)n) {
		n = pread(fd, (char *)b->s->prog + got, (size_t)st.st_size - got, (off_t)got);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0) {
			ret = -EIO;
			capfence__seterr(b->err, b->errlen, "profile: cannot read the exported program");
			goto out;
		}
	}
	b->s->len = (size_t)st.st_size;
	crypto_hash_sha256(b->s->digest, (const unsigned char *)b->s->prog, b->s->len);
	ret = 0;
out:
	close(fd);
	return ret;
}

/* The running kernel's MAJOR.MINOR, for minKernel. */
static void running_kernel(int *maj, int *min)
{
	struct utsname u;

	*maj = *min = 0;
	if (!uname(&u))
		sscanf(u.release, "%d.%d", maj, min);
}

int capfence_seccomp_compile_opts(const char *text, size_t len,
				  const struct capfence_epoch *e,
				  const struct capfence_seccomp_opts *opts,
				  struct capfence_seccomp **out, char *err,
				  size_t errlen)
{
	static const char *const keys[] = {
		"defaultAction", "defaultErrnoRet", "defaultErrno",
		"architectures", "archMap", "flags", "syscalls", "comment", NULL
	};
	struct cf_sc_build b = { .err = err, .errlen = errlen,
				 .caps = cf_sc_default_caps };
	struct capfence_seccomp_opts o;
	struct json_object *root = NULL, *sys = NULL;
	enum json_tokener_error jerr;
	struct json_tokener *tok;
	const char *bad;
	size_t i;
	int ret;

	*out = NULL;
	if (!text || !e)
		return -EINVAL;
	ret = CF_OPTS(opts, &o, no_new_filters, "profile options", err, errlen);
	if (ret)
		return ret;
	running_kernel(&b.kmaj, &b.kmin);
	if (o.caps)
		b.caps = o.caps;
	if (check_caps(b.caps, err, errlen))
		return -EINVAL;
	b.no_new_filters = o.no_new_filters;
	if (o.kernel && sscanf(o.kernel, "%d.%d", &b.kmaj, &b.kmin) != 2) {
		capfence__seterr(err, errlen, "profile: kernel version '%.32s' is not MAJOR.MINOR",
				 o.kernel);
		return -EINVAL;
	}
	if (len > CAPFENCE_SECCOMP_PROFILE_MAX) {
		capfence__seterr(err, errlen,
				 "profile: %zu bytes, more than the %d a profile may have",
				 len, CAPFENCE_SECCOMP_PROFILE_MAX);
		return -E2BIG;
	}
	if (sodium_init() < 0)
		return -EIO;
	tok = json_tokener_new_ex(64);
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!root || jerr != json_tokener_success) {
		capfence__seterr(err, errlen, "profile: bad JSON at byte %zu: %s",
				 json_tokener_get_parse_end(tok),
				 jerr == json_tokener_continue ? "unexpected end of input" :
				 json_tokener_error_desc(jerr));
		json_tokener_free(tok);
		json_object_put(root);
		return -EINVAL;
	}
	for (i = json_tokener_get_parse_end(tok); i < len; i++)
		if (!strchr(" \t\r\n", text[i])) {
			capfence__seterr(err, errlen, "profile: bad JSON at byte %zu: trailing data", i);
			json_tokener_free(tok);
			json_object_put(root);
			return -EINVAL;
		}
	json_tokener_free(tok);
	ret = -EINVAL;
	if (!json_object_is_type(root, json_type_object)) {
		capfence__seterr(err, errlen, "profile: not a JSON object");
		goto out;
	}
	if (!only_keys(root, keys, &bad)) {
		capfence__seterr(err, errlen,
				 "profile: unknown key '%.64s' (a profile has defaultAction, defaultErrnoRet, defaultErrno, architectures or archMap, flags, syscalls, comment)",
				 bad);
		goto out;
	}
	ret = -ENOMEM;
	b.s = calloc(1, sizeof(*b.s));
	if (!b.s)
		goto out;
	b.s->notes = calloc(CF_SC_MAX_NOTES, sizeof(*b.s->notes));
	if (!b.s->notes)
		goto out;
	ret = get_action(&b, root, "defaultAction", "defaultErrnoRet", "defaultErrno",
			 "defaultAction", "defaultAction", &b.def);
	if (ret)
		goto out;
	ret = -ENOMEM;
	b.ctx = seccomp_init(scmp_action(b.def));
	if (!b.ctx)
		goto out;
	/* a call from an architecture the profile does not list: EACCES too */
	ret = seccomp_attr_set(b.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EACCES));
	if (ret)
		goto out;
	ret = get_arches(&b, root);
	if (!ret)
		ret = get_flags(&b, root);
	if (ret)
		goto out;
	if (json_object_object_get_ex(root, "syscalls", &sys)) {
		if (!json_object_is_type(sys, json_type_array)) {
			capfence__seterr(err, errlen, "profile: syscalls must be an array");
			ret = -EINVAL;
			goto out;
		}
		b.n_rules = json_object_array_length(sys);
		b.rules = calloc(b.n_rules + 1, sizeof(*b.rules));
		if (!b.rules) {
			ret = -ENOMEM;
			goto out;
		}
		for (i = 0; i < b.n_rules; i++) {
			ret = add_rule(&b, json_object_array_get_idx(sys, i), i);
			if (ret)
				goto out;
		}
	}
	ret = check_classes(&b, e);
	if (!ret)
		ret = uring_policy(&b);
	if (!ret)
		ret = refuse_new_filters(&b);
	if (!ret)
		ret = export_prog(&b);
	if (!ret) {
		*out = b.s;
		b.s = NULL;
	}
out:
	if (b.ctx)
		seccomp_release(b.ctx);
	free(b.rules);
	capfence_seccomp_free(b.s);
	json_object_put(root);
	return ret;
}

int capfence_seccomp_compile_file_opts(const char *path,
				       const struct capfence_epoch *e,
				       const struct capfence_seccomp_opts *opts,
				       struct capfence_seccomp **out, char *err,
				       size_t errlen)
{
	size_t got = 0;
	struct stat st;
	char *text;
	ssize_t n;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > CAPFENCE_SECCOMP_PROFILE_MAX) {
		close(fd);
		if (!S_ISREG(st.st_mode)) {
			capfence__seterr(err, errlen, "%s: not a regular file", path);
			return -EINVAL;
		}
		capfence__seterr(err, errlen,
				 "%s: profile: %lld bytes, more than the %d a profile may have",
				 path, (long long)st.st_size, CAPFENCE_SECCOMP_PROFILE_MAX);
		return -E2BIG;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	/* a read may return less than asked, or be interrupted */
	while (got < (size_t)st.st_size) {
		n = read(fd, text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
		free(text);
		capfence__seterr(err, errlen, "%s: short read", path);
		return -EIO;
	}
	text[got] = '\0';
	ret = capfence_seccomp_compile_opts(text, got, e, opts, out, err, errlen);
	free(text);
	if (ret && err && errlen) {
		char msg[CAPFENCE_ERR_MAX];

		snprintf(msg, sizeof(msg), "%s", err);
		capfence__seterr(err, errlen, "%s: %s", path, msg);
	}
	return ret;
}


size_t capfence_seccomp_notes(const struct capfence_seccomp *s)
{
	return s ? s->n_notes : 0;
}

const char *capfence_seccomp_note(const struct capfence_seccomp *s, size_t i)
{
	return s && i < s->n_notes ? s->notes[i] : NULL;
}

const void *capfence_seccomp_program(const struct capfence_seccomp *s, size_t *len)
{
	*len = s ? s->len : 0;
	return s ? s->prog : NULL;
}

void capfence_seccomp_digest(const struct capfence_seccomp *s,
			     uint8_t digest[CAPFENCE_SECCOMP_DIGEST_LEN])
{
	memcpy(digest, s->digest, CAPFENCE_SECCOMP_DIGEST_LEN);
}

void capfence_seccomp_free(struct capfence_seccomp *s)
{
	if (!s)
		return;
	free(s->prog);
	free(s->notes);
	free(s);
}

int capfence_seccomp_apply(const void *prog, size_t len)
{
	struct sock_fprog fp = {
		.len = (unsigned short)(len / sizeof(struct sock_filter)),
		.filter = (struct sock_filter *)prog,
	};

	if (!prog || !len || len % sizeof(struct sock_filter) ||
	    len / sizeof(struct sock_filter) > CAPFENCE_SECCOMP_MAX_INSNS)
		return -EINVAL;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp))
		return -errno;
	return 0;
}
