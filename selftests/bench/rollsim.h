/* SPDX-License-Identifier: GPL-2.0 */
/* Shared between rollsim and rollsim-sandbox. */
#ifndef ROLLSIM_H
#define ROLLSIM_H

/* Descriptor a socket opened under a narrowed-epoch grant is placed on. */
#define ROLLSIM_GRANT_FD	200

#endif
