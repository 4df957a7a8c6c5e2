/* kletd.c — the node agent's entry point (filled in by the foundation work). */
#include "log.h"

int
main(void)
{
	log_init(0, 0);
	log_info("kletd %s", KLET_VERSION);
	return 0;
}
