/*
 * Which GET paths are read documents, pushed by the master and served
 * by the webworker from memory (shared/nops.h, "Pushed reads").  Both
 * ends use this one list: the webworker to decide what it answers
 * itself, the master to refuse a WANT for anything else.
 */
#include "config.h"

#include <string.h>

#include "nops.h"

static const struct {
	const char	*path;		/* "*" stands for one segment */
	int		 kind;
} web_docs[] = {
	{ "/api/v1/status",		WEB_DOC_READ },
	{ "/api/v1/engine",		WEB_DOC_READ },
	{ "/api/v1/overview",		WEB_DOC_READ },
	{ "/api/v1/events",		WEB_DOC_READ },
	{ "/api/v1/jobs",		WEB_DOC_READ },
	{ "/api/v1/jobs/*/*",		WEB_DOC_READ },
	{ "/api/v1/deployments",	WEB_DOC_READ },
	{ "/api/v1/deployments/*",	WEB_DOC_READ },
	{ "/api/v1/orphans",		WEB_DOC_READ },
	{ "/api/v1/files/errors",	WEB_DOC_READ },
	{ "/api/v1/repositories",	WEB_DOC_READ },
	{ "/api/v1/repositories/*",	WEB_DOC_READ },
	{ "/api/v1/tokens",		WEB_DOC_READ },
	{ "/api/v1/openapi.json",	WEB_DOC_PUBLIC },
};

/*
 * 1 if path matches pattern, segment by segment: a literal segment must
 * be equal, a "*" segment takes one non-empty segment of path, which
 * star() (when not NULL) is given and may refuse by returning -1.
 */
int
web_path_match(const char *pattern, const char *path,
    int (*star)(void *, const char *, size_t), void *arg)
{
	size_t	 n;

	while (*pattern != '\0' && *path != '\0') {
		if (pattern[0] == '*' && (pattern[1] == '/' ||
		    pattern[1] == '\0')) {
			n = strcspn(path, "/");
			if (n == 0 ||
			    (star != NULL && star(arg, path, n) == -1))
				return 0;
			path += n;
			pattern++;
			continue;
		}
		if (*pattern++ != *path++)
			return 0;
	}
	return *pattern == '\0' && *path == '\0';
}

int
web_doc_route(const char *path)
{
	size_t	 i;

	for (i = 0; i < sizeof(web_docs) / sizeof(web_docs[0]); i++)
		if (web_path_match(web_docs[i].path, path, NULL, NULL))
			return web_docs[i].kind;
	return WEB_DOC_NO;
}

int
web_doc_key_cmp(uint32_t acls, const char *atarget, uint32_t bcls,
    const char *btarget)
{
	if (acls != bcls)
		return acls < bcls ? -1 : 1;
	return strcmp(atarget, btarget);
}
