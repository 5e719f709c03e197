/* placeholder: replaced by the merge work */
#include <stdlib.h>
int main(void) { return EXIT_SUCCESS; }
