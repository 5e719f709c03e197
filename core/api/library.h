/*
 * library.h -- libdal's process-wide set-up.
 */
#ifndef DAL_CORE_LIBRARY_H
#define DAL_CORE_LIBRARY_H

/* libmysqlclient's global init and the plugin host table, exactly once;
 * every entry point that may connect or load a plugin calls it first. */
void library_ensure_init(void);

#endif /* DAL_CORE_LIBRARY_H */
