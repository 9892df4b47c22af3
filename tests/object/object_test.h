/* SPDX-License-Identifier: MIT */
/* Shared by the lib/object tests. */
#ifndef EGPU_OBJECT_TEST_H
#define EGPU_OBJECT_TEST_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "object/object.h"
#include "verifier/verifier.h"
#include "test_util.h"

/* Assert that @expr failed with @code and a message containing @text. */
#define ck_assert_fails(expr, code, text)                                    \
	do {                                                                 \
		int err_ = (expr);                                           \
		ck_assert_msg(err_ == (code), "%s: %d, not %d (%s)", #expr,  \
			      err_, (code), egpu_errmsg());                  \
		ck_assert_msg(strstr(egpu_errmsg(), (text)),                 \
			      "message '%s' lacks '%s'", egpu_errmsg(),      \
			      (text));                                       \
	} while (0)

#define ck_assert_ok(expr)                                                   \
	do {                                                                 \
		int err_ = (expr);                                           \
		ck_assert_msg(err_ == 0, "%s: %d (%s)", #expr, err_,         \
			      egpu_errmsg());                                \
	} while (0)



#endif
