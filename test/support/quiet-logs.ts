/**
 * Jest setup: services log nothing unless a test gives them a logger (or sets SVC_LOG_LEVEL), so
 * that request lines do not bury the test output.
 */
process.env.SVC_LOG_LEVEL ??= 'silent';
