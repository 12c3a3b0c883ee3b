// SPDX-License-Identifier: GPL-2.0
/* libcapfence: key generation, key files, and their error messages. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cf_test.h"

FIXTURE(keyfile) {
	char dir[64];
	char path[128];
};

FIXTURE_SETUP(keyfile)
{
	strcpy(self->dir, "/tmp/cf_key_XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->path, sizeof(self->path), "%s/k", self->dir);
}

FIXTURE_TEARDOWN(keyfile)
{
	unlink(self->path);
	rmdir(self->dir);
}

static int write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

TEST_F(keyfile, round_trip)
{
	uint8_t a[CAPFENCE_KEY_LEN], b[CAPFENCE_KEY_LEN];
	struct capfence_key *k, *k2, *k3;
	char err[CAPFENCE_ERR_MAX], text[128];
	struct stat st;
	mode_t old;
	int n;

	ASSERT_EQ(0, capfence_key_generate(7, &k));
	EXPECT_EQ(7u, capfence_key_id(k));
	old = umask(0);	/* the file must be 0600 whatever the umask */
	ASSERT_EQ(0, capfence_key_save(k, self->path, err, sizeof(err)))
		TH_LOG("%s", err);
	umask(old);
	ASSERT_EQ(0, stat(self->path, &st));
	EXPECT_EQ(0600u, st.st_mode & 07777);
	ASSERT_EQ(0, capfence_key_load(self->path, &k2, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(7u, capfence_key_id(k2));
	capfence_key_bytes(k, a);
	capfence_key_bytes(k2, b);
	EXPECT_EQ(0, memcmp(a, b, sizeof(a)));

	n = capfence_key_format(k, text, sizeof(text));
	ASSERT_LT(0, n);
	EXPECT_EQ(0, strncmp(text, "capfence-key v1\nid 7\nkey ", 25));
	EXPECT_EQ('\n', text[n - 1]);
	EXPECT_EQ(25 + 43 + 1, n);
	EXPECT_EQ(-ENOSPC, capfence_key_format(k, text, 20));

	/* saving over an existing file replaces it */
	ASSERT_EQ(0, capfence_key_generate(8, &k3));
	ASSERT_EQ(0, capfence_key_save(k3, self->path, NULL, 0));
	capfence_key_free(k2);
	ASSERT_EQ(0, capfence_key_load(self->path, &k2, NULL, 0));
	EXPECT_EQ(8u, capfence_key_id(k2));
	capfence_key_bytes(k2, b);
	EXPECT_NE(0, memcmp(a, b, sizeof(a)));
	capfence_key_free(k);
	capfence_key_free(k2);
	capfence_key_free(k3);
	capfence_key_free(NULL);
	CF_NO_LEAKS();
}

TEST(generate)
{
	uint8_t a[CAPFENCE_KEY_LEN], b[CAPFENCE_KEY_LEN];
	struct capfence_key *k1, *k2, *k;

	EXPECT_EQ(-EINVAL, capfence_key_generate(0, &k));
	ASSERT_EQ(0, capfence_key_generate(1, &k1));
	ASSERT_EQ(0, capfence_key_generate(1, &k2));
	capfence_key_bytes(k1, a);
	capfence_key_bytes(k2, b);
	EXPECT_NE(0, memcmp(a, b, sizeof(a)));
	EXPECT_EQ(-EINVAL, capfence_key_from_bytes(0, a, &k));
	capfence_key_free(k1);
	capfence_key_free(k2);
	CF_NO_LEAKS();
}

#define KEY43 "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

static const struct {
	const char *text;
	const char *msg;
} bad[] = {
	{ "", "line 1: not a capfence key file" },
	{ "hello\n", "line 1: not a capfence key file" },
	{ "capfence-key v2\nid 1\nkey " KEY43 "\n",
	  "line 1: unsupported key file version" },
	{ "capfence-key v1 \nid 1\nkey " KEY43 "\n",
	  "line 1: unexpected characters after \"capfence-key v1\"" },
	{ "capfence-key v1\n", "line 2: expected \"id N\"" },
	{ "capfence-key v1\nkey " KEY43 "\nid 1\n", "line 2: expected \"id N\"" },
	{ "capfence-key v1\nid 0\nkey " KEY43 "\n",
	  "line 2: key id \"0\" is not a decimal in 1..4294967295" },
	{ "capfence-key v1\nid 01\nkey " KEY43 "\n", "line 2: key id \"01\"" },
	{ "capfence-key v1\nid -1\nkey " KEY43 "\n", "line 2: key id \"-1\"" },
	{ "capfence-key v1\nid x\nkey " KEY43 "\n", "line 2: key id \"x\"" },
	{ "capfence-key v1\nid 1 \nkey " KEY43 "\n", "line 2: key id \"1 \"" },
	{ "capfence-key v1\nid 4294967296\nkey " KEY43 "\n",
	  "line 2: key id \"4294967296\"" },
	{ "capfence-key v1\nid 1\n", "line 3: expected \"key BASE64URL\"" },
	{ "capfence-key v1\nid 1\nkey \n", "line 3: expected \"key BASE64URL\"" },
	{ "capfence-key v1\nid 1\nkey " KEY43 "=\n",
	  "line 3: key is not base64url without padding" },
	{ "capfence-key v1\nid 1\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+\n",
	  "line 3: key is not base64url without padding" },
	{ "capfence-key v1\nid 1\nkey " KEY43 " \n",
	  "line 3: key is not base64url without padding" },
	{ "capfence-key v1\nid 1\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9\n",
	  "line 3: key is not base64url without padding" },
	{ "capfence-key v1\nid 1\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd\n",
	  "line 3: key is 30 bytes, expected 32" },
	{ "capfence-key v1\nid 1\nkey " KEY43 "AAAA\n",
	  "line 3: key is 35 bytes, expected 32" },
	{ "capfence-key v1\nid 1\nkey " KEY43 "\n\n",
	  "line 4: unexpected content after the key" },
	{ "capfence-key v1\nid 1\nkey " KEY43 "\nid 2\n",
	  "line 4: unexpected content after the key" },
	{ "capfence-key v1\r\nid 1\r\nkey " KEY43 "\r\n",
	  "line 1: carriage return (CRLF line ends are not accepted)" },
	{ "capfence-key v1\nid 1\nkey " KEY43 "\r\n",
	  "line 3: carriage return" },
};

TEST_F(keyfile, bad_files)
{
	char err[CAPFENCE_ERR_MAX], want[CAPFENCE_ERR_MAX];
	struct capfence_key *k;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_EQ(0, write_file(self->path, bad[i].text,
					strlen(bad[i].text)));
		err[0] = '\0';
		k = (struct capfence_key *)1;
		EXPECT_EQ(-EBADMSG, capfence_key_load(self->path, &k, err,
						sizeof(err)))
			TH_LOG("case %zu accepted", i);
		EXPECT_EQ(NULL, k);
		snprintf(want, sizeof(want), "%s: %s", self->path, bad[i].msg);
		EXPECT_EQ(0, strncmp(err, want, strlen(want)))
			TH_LOG("case %zu: got \"%s\", want \"%s\"", i, err,
			       want);
	}
	ASSERT_EQ(0, write_file(self->path, "capfence-key v1\0\nid 1\n", 22));
	EXPECT_EQ(-EBADMSG, capfence_key_load(self->path, &k, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "NUL byte in key file"));
	CF_NO_LEAKS();
}

TEST_F(keyfile, good_variants)
{
	uint8_t b[CAPFENCE_KEY_LEN];
	struct capfence_key *k;
	int i;

	/* the final newline is optional */
	ASSERT_EQ(0, capfence_key_parse("capfence-key v1\nid 4294967295\nkey "
				  KEY43, &k, NULL, 0));
	EXPECT_EQ(4294967295u, capfence_key_id(k));
	capfence_key_bytes(k, b);
	for (i = 0; i < CAPFENCE_KEY_LEN; i++)
		EXPECT_EQ(i, b[i]);
	capfence_key_free(k);
	CF_NO_LEAKS();
}

TEST_F(keyfile, open_errors)
{
	char err[CAPFENCE_ERR_MAX], want[CAPFENCE_ERR_MAX];
	struct capfence_key *k;

	EXPECT_EQ(-ENOENT, capfence_key_load(self->path, &k, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: No such file or directory",
		 self->path);
	EXPECT_STREQ(want, err);
	EXPECT_EQ(-EBADMSG, capfence_key_load(self->dir, &k, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "not a regular file")) TH_LOG("%s", err);
	ASSERT_EQ(0, write_file(self->path, "x", 1));
	ASSERT_EQ(0, chmod(self->path, 0));
	if (geteuid() != 0) {
		EXPECT_EQ(-EACCES, capfence_key_load(self->path, &k, err,
					       sizeof(err)));
		EXPECT_NE(NULL, strstr(err, "Permission denied"));
	}
	CF_NO_LEAKS();
}

TEST(save_errors)
{
	char err[CAPFENCE_ERR_MAX];
	struct capfence_key *k;

	ASSERT_EQ(0, capfence_key_generate(1, &k));
	EXPECT_EQ(-ENOENT, capfence_key_save(k, "/nonexistent-dir/k", err,
				       sizeof(err)));
	EXPECT_STREQ("/nonexistent-dir/k: No such file or directory", err);
	EXPECT_EQ(-EINVAL, capfence_key_save(k, "", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, capfence_key_save(NULL, "/tmp/x", err, sizeof(err)));
	capfence_key_free(k);
	CF_NO_LEAKS();
}

TEST_HARNESS_MAIN
