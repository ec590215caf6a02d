#ifndef NOPS_WEBWORKER_H
#define NOPS_WEBWORKER_H

#include "log.h"

__dead void	 webworker_main(int debug, int verbose);

#endif
