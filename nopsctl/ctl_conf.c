/*
 * The control socket nops.conf names, for nopsctl's default: the
 * "control socket" statement of the config file, with the macros and
 * include files it may use.  Only that statement is read; everything else
 * is nopsd's to judge (nopsd -n).  A file nopsctl may not read (nops.conf
 * is often root's alone) is skipped quietly, and the compiled-in default
 * is used.
 */
#include "config.h"

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

struct conf_scan {
	char	*macro_name[CONF_MACROS_MAX];
	char	*macro_value[CONF_MACROS_MAX];
	size_t	 nmacros;
	char	*socket;
};

static const char *
conf_macro(struct conf_scan *cs, const char *name)
{
	size_t	 i;

	for (i = cs->nmacros; i-- > 0;)
		if (strcmp(cs->macro_name[i], name) == 0)
			return cs->macro_value[i];
	return NULL;
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
			for (len = 1; isalnum((unsigned char)words[n][len]) ||
			    words[n][len] == '_'; len++)
				;
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
		    cs->nmacros < CONF_MACROS_MAX) {
			if ((cs->macro_name[cs->nmacros] = strdup(words[0])) ==
			    NULL || (cs->macro_value[cs->nmacros] =
			    strdup(words[2])) == NULL)
				err(1, NULL);
			cs->nmacros++;
		} else if (n >= 2 && !quoted[0] &&
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
	size_t			 i;

	memset(&cs, 0, sizeof(cs));
	conf_scan_file(&cs, path, 0);
	for (i = 0; i < cs.nmacros; i++) {
		free(cs.macro_name[i]);
		free(cs.macro_value[i]);
	}
	return cs.socket;
}
