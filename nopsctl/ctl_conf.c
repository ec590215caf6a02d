/*
 * The control socket nops.conf names, for nopsctl's default: the
 * "control socket" statement of the config file, with the macros and
 * include files it may use.  Only that statement is read; everything else
 * is nopsd's to judge (nopsd -n).  A file nopsctl may not read (nops.conf
 * is often root's alone) is skipped quietly, and the compiled-in default
 * is used.
 */
#include "config.h"

#include <sys/queue.h>

#include <ctype.h>
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nopsctl.h"

#define CONF_DEPTH_MAX	8
#define CONF_MACROS_MAX	256
#define CONF_WORDS_MAX	16
#define CONF_WORD_MAX	1024
/* A macro's name: nopsd's rule (parse.y, is_macro_char), ASCII only. */
#define CONF_MACRO_CHARS	"abcdefghijklmnopqrstuvwxyz" \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

struct conf_macro {
	SLIST_ENTRY(conf_macro)	 entry;
	char			*name;
	char			*value;
};

struct conf_scan {
	SLIST_HEAD(, conf_macro) macros;	/* the newest first */
	size_t			 nmacros;
	char			*socket;
};

static const char *
conf_macro(struct conf_scan *cs, const char *name)
{
	struct conf_macro	*m;

	SLIST_FOREACH(m, &cs->macros, entry)
		if (strcmp(m->name, name) == 0)
			return m->value;
	return NULL;
}

static void
conf_macro_add(struct conf_scan *cs, const char *name, const char *value)
{
	struct conf_macro	*m;

	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->name = strdup(name)) == NULL ||
	    (m->value = strdup(value)) == NULL)
		err(1, NULL);
	SLIST_INSERT_HEAD(&cs->macros, m, entry);
	cs->nmacros++;
}

/*
 * The words of one line: bare words, "quoted strings" (with \" and \\)
 * and $macros expanded; a # outside quotes ends the line.  Returns the
 * number of words; quoted[i] says a word was quoted.
 */
static size_t
conf_words(struct conf_scan *cs, const char *line,
    char words[][CONF_WORD_MAX], int *quoted)
{
	const char	*p = line, *v;
	size_t		 n = 0, len;
	char		 name[CONF_WORD_MAX];

	while (n < CONF_WORDS_MAX) {
		while (*p == ' ' || *p == '\t' || *p == '{' || *p == '}')
			p++;
		if (*p == '\0' || *p == '#' || *p == '\n')
			break;
		len = 0;
		quoted[n] = 0;
		if (*p == '"') {
			quoted[n] = 1;
			for (p++; *p != '\0' && *p != '"' && *p != '\n'; p++) {
				if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
					p++;
				if (len < CONF_WORD_MAX - 1)
					words[n][len++] = *p;
			}
			if (*p == '"')
				p++;
		} else {
			while (*p != '\0' && !isspace((unsigned char)*p) &&
			    *p != '#' && *p != '{' && *p != '}') {
				if (len < CONF_WORD_MAX - 1)
					words[n][len++] = *p;
				p++;
			}
		}
		words[n][len] = '\0';
		if (!quoted[n] && words[n][0] == '$') {
			/* $name, or $name/more as in "ssh key file $dir/id" */
			len = 1 + strspn(words[n] + 1, CONF_MACRO_CHARS);
			snprintf(name, sizeof(name), "%.*s", (int)len - 1,
			    words[n] + 1);
			if ((v = conf_macro(cs, name)) != NULL) {
				snprintf(name, sizeof(name), "%s%s", v,
				    words[n] + len);
				strlcpy(words[n], name, CONF_WORD_MAX);
				quoted[n] = 1;
			}
		}
		n++;
	}
	return n;
}

static void
conf_scan_file(struct conf_scan *cs, const char *path, int depth)
{
	FILE	*fp;
	char	*line = NULL, words[CONF_WORDS_MAX][CONF_WORD_MAX];
	size_t	 cap = 0, n;
	int	 quoted[CONF_WORDS_MAX];

	if (depth > CONF_DEPTH_MAX || (fp = fopen(path, "r")) == NULL)
		return;
	while (getline(&line, &cap, fp) != -1) {
		n = conf_words(cs, line, words, quoted);
		if (n == 3 && !quoted[0] && strcmp(words[1], "=") == 0 &&
		    cs->nmacros < CONF_MACROS_MAX)
			conf_macro_add(cs, words[0], words[2]);
		else if (n >= 2 && !quoted[0] &&
		    strcmp(words[0], "include") == 0 && quoted[1])
			conf_scan_file(cs, words[1], depth + 1);
		else if (n >= 3 && !quoted[0] && !quoted[1] &&
		    strcmp(words[0], "control") == 0 &&
		    strcmp(words[1], "socket") == 0 && quoted[2]) {
			free(cs->socket);
			if ((cs->socket = strdup(words[2])) == NULL)
				err(1, NULL);
		}
	}
	free(line);
	fclose(fp);
}

char *
ctl_conf_socket(const char *path)
{
	struct conf_scan	 cs;
	struct conf_macro	*m;

	memset(&cs, 0, sizeof(cs));
	SLIST_INIT(&cs.macros);
	conf_scan_file(&cs, path, 0);
	while ((m = SLIST_FIRST(&cs.macros)) != NULL) {
		SLIST_REMOVE_HEAD(&cs.macros, entry);
		free(m->name);
		free(m->value);
		free(m);
	}
	return cs.socket;
}
