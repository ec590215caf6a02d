/*
 * Redaction of secrets from a Nomad plan diff before nops stores or shows
 * it.  The full spec to register is stored apart and never shown.
 */
#ifndef NOPS_REDACT_H
#define NOPS_REDACT_H

#include <stddef.h>

#include <jansson.h>

#define REDACTED	"<redacted>"

/*
 * redact_diff: redact, in place, every value of a plan's Diff (JobDiff
 * JSON) that is or may be a secret: environment values, template bodies,
 * fields whose name says password/token/secret/key/credential/auth,
 * credentials in URLs, and arguments that look like secrets.  Returns the
 * number of values redacted.
 */
int	 redact_diff(json_t *);

/* The rules, exposed for tests and for other redaction. */
int	 redact_name_is_secret(const char *);
int	 redact_value_looks_secret(const char *);
/* A copy of s with "user:pass@" in URLs replaced; caller frees. */
char	*redact_url_credentials(const char *);

/* Free text (hook output) redacted like a diff; a new string or NULL. */
char	*redact_text(const char *, size_t);

#endif /* NOPS_REDACT_H */
