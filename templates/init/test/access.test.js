// The access matrix test (made by svcgen init): every operation of generated/access.md called as
// every kind of caller (anonymous, an authenticated user, staff, a superuser) on a fresh in-memory
// SQLite database. A cell of 401 or 403 must be answered so, a 2xx cell with neither, and a cell
// decided by hooks not with a 401 to a caller whose token is valid. The test itself is
// generated/access-test.ts, which `svcgen build` rewrites with the matrix: a hook that lets a caller
// through the matrix refuses (an authenticator accepting an anonymous caller) fails here, naming the
// operation and the caller. Runs with Node's test runner on the compiled service in dist/.
'use strict';
const { testAccessMatrix } = require('../dist/generated/access-test');

testAccessMatrix();
