/* podctl.c — read-only inspection client (placeholder until the ctl work lands). */
#include <stdio.h>

int
main(void)
{
	printf("podctl %s\n", KLET_VERSION);
	return 0;
}
