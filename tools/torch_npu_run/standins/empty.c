/* A CANN library of which nothing is stood in: it only needs libcann_absent.so. */
