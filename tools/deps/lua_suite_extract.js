// SPDX-License-Identifier: MIT
// Writes the Lua chunks of fengari's test suite (Lua 5.3's own test suite,
// split into one JavaScript test per section: test/test-suite/*.test.js of
// the npm package) as plain .lua files, one per chunk the test loads:
//   node lua_suite_extract.js SUITE_DIR OUT_DIR
// Each test file is run with its require()d modules replaced by stand-ins
// that only record the strings given to luaL_loadstring/luaL_loadbuffer,
// so no JavaScript Lua runs and template literals are decoded by node
// itself.  Prints "<n> chunks from <m> tests".
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const [suite, out] = process.argv.slice(2);
if (!suite || !out) {
    console.error("usage: node lua_suite_extract.js SUITE_DIR OUT_DIR");
    process.exit(2);
}
fs.mkdirSync(out, { recursive: true });

let chunks = 0, tests = 0, current = "";
const loaded = (L, code) => {
    const name = `${current}.${String(++chunks).padStart(4, "0")}.lua`;
    fs.writeFileSync(path.join(out, name), typeof code === "string" ? code : Buffer.from(code));
    return 0;
};
// any property is a function that returns undefined, except the loaders
const standIn = () => new Proxy({}, {
    get: (_, p) => p === "luaL_loadstring" || p === "luaL_loadbuffer" ? loaded
        : p === "to_luastring" ? (s) => s
        : p === "luaL_newstate" ? () => ({})
        : p === "LUA_ERRSYNTAX" ? 3
        : () => undefined,
});
for (const file of fs.readdirSync(suite).filter((f) => f.endsWith(".test.js")).sort()) {
    current = file.replace(/\.test\.js$/, "");
    const test = (name, fn) => { tests++; try { fn(); } catch (e) { /* a stand-in's undefined: the chunk is written */ } };
    test.skip = () => {}; // what fengari skips (its own limits), skipped here too
    const sandbox = { require: standIn, test, console, Buffer };
    vm.runInNewContext(fs.readFileSync(path.join(suite, file), "utf8"), sandbox, { filename: file });
}
console.log(`${chunks} chunks from ${tests} tests`);
