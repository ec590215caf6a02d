#ifndef NOPS_NOMADWORKER_H
#define NOPS_NOMADWORKER_H

#include "log.h"

__dead void	 nomadworker_main(int debug, int verbose);

#endif
