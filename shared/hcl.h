/*
 * A reader of HCL's native syntax (hcl.c): the structure of a job file
 * without Nomad.
 */
#ifndef NOPS_HCL_H
#define NOPS_HCL_H

#include <stddef.h>

#define HCL_LABELS_MAX	4

/* A block (with its labels and children) or an attribute. */
struct hcl_node {
	char		*hn_name;	/* NULL for the file's body */
	char		*hn_labels[HCL_LABELS_MAX];
	int		 hn_nlabels;
	int		 hn_line;
	int		 hn_block;
	char		*hn_value;	/* an attribute's literal string */
	int		 hn_object;	/* name = { ... }: keys as children */
	struct hcl_node	*hn_parent;
	struct hcl_node	*hn_child;	/* in file order */
	struct hcl_node	*hn_next;
};

/*
 * The file's body as a tree, or NULL with the syntax error in err and
 * its line in *errline.  data is text; len bytes, NUL-terminated.
 */
struct hcl_node	*hcl_parse(const char *data, size_t len, char *err,
		    size_t errlen, int *errline);
void		 hcl_free(struct hcl_node *);
/* The first child named name (with first label label, unless NULL). */
struct hcl_node	*hcl_find(const struct hcl_node *, const char *name,
		    const char *label);

#endif /* NOPS_HCL_H */
