/* Stand-in (tools/cann_host): the version header CANN's build generates; no version number, so
 * opbase skips the version-gated exception-callback registration (indv_executor.cpp). */
