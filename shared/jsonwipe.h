/*
 * jansson's memory wiped as it is freed (shared/jsonwipe.c).
 */
#ifndef NOPS_JSONWIPE_H
#define NOPS_JSONWIPE_H

/*
 * jsonwipe_init: from now on, every block jansson frees is zeroed first,
 * so a password or token a JSON value held does not stay in freed memory
 * (jansson gives no writable pointer to a string's bytes).  Called once,
 * first thing, by each program that parses secrets as JSON.
 */
void	 jsonwipe_init(void);

#endif
