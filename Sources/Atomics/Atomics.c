// The counter's functions are inline, in the header; a C target needs one source file.
#include "PropertyObservationAtomics.h"
