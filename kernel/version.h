/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's version (MODULE_VERSION, STATUS_GET); the packaging reads it
 * from here.
 */
#ifndef _CAPFENCE_VERSION_H
#define _CAPFENCE_VERSION_H

#define CAPFENCE_VERSION "0.3.0"

#endif /* _CAPFENCE_VERSION_H */
