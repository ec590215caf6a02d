/* nopsctl: API tokens (over the API) and the offline secret helpers. */
#ifndef NOPS_CTL_AUTH_H
#define NOPS_CTL_AUTH_H

struct ctl;

/* token create NAME --policy POLICY [--expires DURATION] | list | revoke */
int	 cmd_token(struct ctl *, int, char **);
/* hash-password: a bcrypt hash for the users file, offline */
int	 cmd_hash_password(struct ctl *, int, char **);
/* gen-secret: 32 random bytes in hex, offline */
int	 cmd_gen_secret(struct ctl *, int, char **);

#endif /* NOPS_CTL_AUTH_H */
