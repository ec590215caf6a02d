/*
 * Git context of a deployment (gitctx.c): the commit's web link and the
 * git-side change of the job file.
 */
#ifndef NOPS_GITCTX_H
#define NOPS_GITCTX_H

/*
 * The link template of a remote without commit-url in nops.conf: GitHub,
 * Gitea and Codeberg style (.../commit/{commit}) for hosts named github,
 * gitea, codeberg (or under them), GitLab style (.../-/commit/{commit})
 * for gitlab ones; NULL for any other.  Never keeps a user or password.
 */
char		*gitctx_default_template(const char *url);
/* The template with {commit} replaced; NULL without one. */
char		*gitctx_commit_url(const char *tmpl, const char *commit);
/* A job file's text with env values and template bodies redacted. */
char		*gitctx_redact_source(const char *text);
/*
 * A unified diff (3 lines of context) of old to new, named path; NULL
 * when they are equal.  Give it redacted texts.
 */
char		*gitctx_diff(const char *path, const char *old,
		    const char *new);

#endif /* NOPS_GITCTX_H */
