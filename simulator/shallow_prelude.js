// The prelude of every JavaScript computational model's V8 context (simulator/shallow.py).
//
// Runs once per context before the user's source, as its own script, so the user's line
// numbers need no offset. Everything it defines is non-writable and non-configurable. It can
// run before the hardware attributes are known (a spare isolate made while a sandbox child
// waits, `start_spare_racer`): it freezes every builtin but the global object itself and
// leaves `__parasim_bind(attrs, globalNames)`, which defines `hw` and the attribute globals,
// then freezes the global object and what it newly reaches. Both run before the user's
// source; `__parasim_bind` is called once per context, and the global object is frozen after
// it. Linted with the front end's ESLint configuration (tests/simulator/test_shallow_prelude.py).
(function () {
  'use strict';
  const BAD_RESULT = String.fromCharCode(0) + 'parasim-not-a-number:';
  const STATE_ERROR = 'parasim-state: ';
  const define = (name, value, enumerable) => Object.defineProperty(
      globalThis, name, {value: value, writable: false, enumerable: enumerable,
                         configurable: false});
  const hasOwn = (object, name) => Object.prototype.hasOwnProperty.call(object, name);
  const fixMethod = (object, name, value) => Object.defineProperty(
      object, name, {value: value, writable: true, enumerable: false, configurable: true});
  // Memory outside the V8 heap (typed arrays, wasm), timers, the real clock (Temporal.Now;
  // Temporal also formats with the host's time zone) and garbage-collection timing
  // (WeakRef, FinalizationRegistry) are not there at all.
  for (const name of ['WebAssembly', 'SharedArrayBuffer', 'ArrayBuffer', 'Atomics',
                      'DataView', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray',
                      'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
                      'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array',
                      'BigUint64Array', 'setTimeout', 'clearTimeout', '__timer_manager',
                      'Temporal', 'WeakRef', 'FinalizationRegistry', 'performance']) {
    if (!Reflect.deleteProperty(globalThis, name)) globalThis[name] = undefined;
  }

  // --- Math.random: a fixed-seed xorshift32, re-seeded at the start of every call.
  const RANDOM_SEED = 0x2545f491;
  let randomState = RANDOM_SEED;
  fixMethod(Math, 'random', function random() {
    randomState ^= randomState << 13; randomState >>>= 0;
    randomState ^= randomState >>> 17;
    randomState ^= randomState << 5; randomState >>>= 0;
    return randomState / 4294967296;
  });

  // --- Locale: en-US unless a model names one; a locale ICU lacks falls back to en-US, never
  // to the host's. Time zone: UTC unless a model names one.
  const DEFAULT_LOCALE = 'en-US';
  const DEFAULT_TIME_ZONE = 'UTC';
  const canonicalLocales = Intl.getCanonicalLocales;
  const fixedLocales = (locales) => {
    const list = canonicalLocales(locales);
    list.push(DEFAULT_LOCALE);
    return list;
  };
  const utcOptions = (options) => {
    if (options === undefined) return {timeZone: DEFAULT_TIME_ZONE};
    if (options === null) return options;  // the real method throws its TypeError
    const given = Object(options);
    const derived = Object.create(given);
    if (given.timeZone === undefined) {
      Object.defineProperty(derived, 'timeZone', {value: DEFAULT_TIME_ZONE});
    }
    return derived;
  };

  // --- The clock: stopped at STOPPED_TIME (the epoch), and local time is UTC.
  const STOPPED_TIME = 0;
  const RealDate = Date;
  const dateProto = RealDate.prototype;
  const realParse = RealDate.parse;
  const realUTC = RealDate.UTC;
  const realGetTime = dateProto.getTime;
  const timeValue = (date) => Reflect.apply(realGetTime, date, []);
  const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct',
                  'Nov', 'Dec'];
  const pad = (value, width) => String(value).padStart(width, '0');
  const dateString = (date) => {
    const year = date.getUTCFullYear();
    return DAYS[date.getUTCDay()] + ' ' + MONTHS[date.getUTCMonth()] + ' ' +
        pad(date.getUTCDate(), 2) + ' ' + (year < 0 ? '-' : '') + pad(Math.abs(year), 4);
  };
  const timeString = (date) => pad(date.getUTCHours(), 2) + ':' + pad(date.getUTCMinutes(), 2) +
      ':' + pad(date.getUTCSeconds(), 2) + ' GMT+0000 (Coordinated Universal Time)';
  const formatted = (format) => function () {
    return Number.isNaN(timeValue(this)) ? 'Invalid Date' : format(this);
  };
  // Strings in the ISO format without an offset, and other strings without a zone, are read
  // as UTC. Other strings get an explicit zone appended (V8 uses the last zone in a string),
  // so the host's zone is never consulted; a string that does not take one gives NaN.
  const ISO_LOCAL = /^(?:[+-]\d{6}|\d{4})-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?$/;
  const ISO_OTHER = /^(?:[+-]\d{6}|\d{4})(?:-\d\d(?:-\d\d)?)?(?:T\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d))?$/;
  const NAMED_ZONES = {z: 0, ut: 0, utc: 0, gmt: 0, est: -300, edt: -240, cst: -360,
                       cdt: -300, mst: -420, mdt: -360, pst: -480, pdt: -420};
  const NAMED_ZONE = /(?<![A-Za-z])(z|ut|utc|gmt|[ecmp][sd]t)(?:\s*([+-])(\d\d?)(?::?(\d\d))?)?\s*$/i;
  const NUMERIC_ZONE = /(?<=\d:\d\d(?::\d\d(?:\.\d+)?)?(?:\s*[ap]\.?m\.?)?)\s*([+-])(\d\d?)(?::?(\d\d))?\s*$/i;
  const offsetMinutes = (sign, hours, minutes) => (sign === '-' ? -1 : 1) *
      (Number(hours) * 60 + Number(minutes || 0));
  const parseUTC = (text) => {
    const string = String(text).trim();
    if (ISO_LOCAL.test(string)) return realParse(string + 'Z');
    if (ISO_OTHER.test(string)) return realParse(string);
    let rest = string.replace(/\([^)]*\)/g, ' ').trim();
    let offset = 0;
    let match = NAMED_ZONE.exec(rest);
    if (match !== null) {
      offset = NAMED_ZONES[match[1].toLowerCase()] +
          (match[2] ? offsetMinutes(match[2], match[3], match[4]) : 0);
    } else {
      match = NUMERIC_ZONE.exec(rest);
      if (match !== null) offset = offsetMinutes(match[1], match[2], match[3]);
    }
    if (match !== null) rest = rest.slice(0, match.index);
    const utc = realParse(rest + ' GMT+0000');
    if (realParse(rest + ' GMT+0100') !== utc - 3600000) return NaN;
    return utc - offset * 60000;
  };
  const toPrimitive = (value) => {
    const isPrimitive = (result) => result === null ||
        (typeof result !== 'object' && typeof result !== 'function');
    const exotic = value[Symbol.toPrimitive];
    if (exotic !== undefined && exotic !== null) {
      const result = Reflect.apply(exotic, value, ['default']);
      if (isPrimitive(result)) return result;
    } else {
      for (const key of ['valueOf', 'toString']) {
        const method = value[key];
        if (typeof method !== 'function') continue;
        const result = Reflect.apply(method, value, []);
        if (isPrimitive(result)) return result;
      }
    }
    throw new TypeError('Cannot convert object to primitive value');
  };
  const dateValueOf = (value) => {
    try { return timeValue(value); } catch { return undefined; }
  };
  const StoppedDate = function Date(...args) {
    if (new.target === undefined) return dateString(new RealDate(STOPPED_TIME)) + ' ' +
        timeString(new RealDate(STOPPED_TIME));
    let time;
    if (args.length === 0) {
      time = STOPPED_TIME;
    } else if (args.length === 1) {
      let value = args[0];
      if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
        const own = dateValueOf(value);
        value = own !== undefined ? own : toPrimitive(value);
      }
      time = typeof value === 'string' ? parseUTC(value) : value;
    } else {
      time = Reflect.apply(realUTC, undefined, args);
    }
    return Reflect.construct(RealDate, [time], new.target);
  };
  Object.defineProperty(StoppedDate, 'length', {value: 7});
  StoppedDate.prototype = dateProto;
  StoppedDate.now = function now() { return STOPPED_TIME; };
  StoppedDate.parse = function parse(string) { return parseUTC(string); };
  StoppedDate.UTC = realUTC;
  fixMethod(dateProto, 'constructor', StoppedDate);
  for (const name of ['Date', 'Day', 'FullYear', 'Hours', 'Milliseconds', 'Minutes', 'Month',
                      'Seconds']) {
    fixMethod(dateProto, 'get' + name, dateProto['getUTC' + name]);
    if (name !== 'Day') fixMethod(dateProto, 'set' + name, dateProto['setUTC' + name]);
  }
  fixMethod(dateProto, 'getTimezoneOffset', function getTimezoneOffset() {
    return Number.isNaN(timeValue(this)) ? NaN : 0;
  });
  fixMethod(dateProto, 'getYear', function getYear() {
    return this.getUTCFullYear() - 1900;
  });
  fixMethod(dateProto, 'setYear', function setYear(year) {
    const time = timeValue(this);
    const number = Number(year);
    if (Number.isNaN(number)) return this.setTime(NaN);
    const whole = Math.trunc(number);
    if (Number.isNaN(time)) this.setTime(0);
    return this.setUTCFullYear(whole >= 0 && whole <= 99 ? 1900 + whole : number);
  });
  fixMethod(dateProto, 'toString', formatted((date) => dateString(date) + ' ' + timeString(date)));
  fixMethod(dateProto, 'toDateString', formatted(dateString));
  fixMethod(dateProto, 'toTimeString', formatted(timeString));
  for (const name of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']) {
    const real = dateProto[name];
    fixMethod(dateProto, name, {[name](locales, options) {
      return Reflect.apply(real, this, [fixedLocales(locales), utcOptions(options)]);
    }}[name]);
  }
  Reflect.deleteProperty(dateProto, 'toTemporalInstant');
  Object.defineProperty(globalThis, 'Date', {value: StoppedDate, writable: true,
                                              enumerable: false, configurable: true});

  // --- Intl: every constructor gets the fixed locale list; DateTimeFormat also UTC, and
  // formatting "now" (no date) formats the stopped clock.
  let freezeSegments = null;  // set below, once the freezing walk exists
  const CALLABLE_INTL = ['DateTimeFormat', 'NumberFormat', 'Collator'];
  for (const name of ['DateTimeFormat', 'NumberFormat', 'Collator', 'v8BreakIterator',
                      'PluralRules', 'RelativeTimeFormat', 'ListFormat', 'DisplayNames',
                      'Segmenter', 'DurationFormat']) {
    const Real = Intl[name];
    if (typeof Real !== 'function') continue;
    const withZone = name === 'DateTimeFormat';
    const callable = CALLABLE_INTL.includes(name);
    const Fixed = {[name]: function (locales, options) {
      if (new.target === undefined && !callable) {
        throw new TypeError("Constructor Intl." + name + " requires 'new'");
      }
      const args = [fixedLocales(locales), withZone ? utcOptions(options) : options];
      const made = Reflect.construct(Real, args, new.target === undefined ? Fixed : new.target);
      if (name === 'Segmenter') freezeSegments(made);
      return made;
    }}[name];
    Object.defineProperty(Fixed, 'length', {value: 0});
    for (const key of Reflect.ownKeys(Real)) {
      if (key !== 'length' && key !== 'name' && key !== 'prototype') {
        Object.defineProperty(Fixed, key, Reflect.getOwnPropertyDescriptor(Real, key));
      }
    }
    Object.defineProperty(Fixed, 'prototype', {value: Real.prototype, writable: false});
    fixMethod(Real.prototype, 'constructor', Fixed);
    fixMethod(Intl, name, Fixed);
  }
  const formatProto = Intl.DateTimeFormat.prototype;
  const realFormat = Reflect.getOwnPropertyDescriptor(formatProto, 'format').get;
  Object.defineProperty(formatProto, 'format', {configurable: true, get: function format() {
    const bound = Reflect.apply(realFormat, this, []);
    return (date) => bound(date === undefined ? STOPPED_TIME : date);
  }});
  const realFormatToParts = formatProto.formatToParts;
  fixMethod(formatProto, 'formatToParts', function formatToParts(date) {
    return Reflect.apply(realFormatToParts, this, [date === undefined ? STOPPED_TIME : date]);
  });
  const withLocales = (proto, name, localesIndex) => {
    const real = proto[name];
    fixMethod(proto, name, {[name](...args) {
      args[localesIndex] = fixedLocales(args[localesIndex]);
      return Reflect.apply(real, this, args);
    }}[name]);
  };
  withLocales(String.prototype, 'localeCompare', 1);
  withLocales(String.prototype, 'toLocaleUpperCase', 0);
  withLocales(String.prototype, 'toLocaleLowerCase', 0);
  withLocales(Number.prototype, 'toLocaleString', 0);
  withLocales(BigInt.prototype, 'toLocaleString', 0);

  // params.x and params.get('x') read the same values; a parameter named "get" or "has"
  // is reachable through params.get() only, so the methods cannot be shadowed.
  const paramValues = new WeakMap();
  const paramsPrototype = {
    get(name, fallback) {
      const values = paramValues.get(this);
      return values !== undefined && hasOwn(values, name) ? values[name] : fallback;
    },
    has(name) {
      const values = paramValues.get(this);
      return values !== undefined && hasOwn(values, name);
    },
  };
  const makeParams = (values) => {
    const params = Object.create(paramsPrototype);
    paramValues.set(params, values);
    for (const key of Object.keys(values)) {
      if (key === 'get' || key === 'has') continue;
      Object.defineProperty(params, key, {value: values[key], enumerable: true});
    }
    Object.freeze(values);
    return Object.freeze(params);
  };
  // A result that is not a number comes back as a description the error message can show.
  const describe = (value) => {
    if (value === null) return 'null';
    if (Array.isArray(value)) return 'an array';
    switch (typeof value) {
      case 'undefined': return 'undefined';
      case 'boolean': return 'the boolean ' + value;
      case 'string': return 'the string ' + JSON.stringify(value.slice(0, 60));
      case 'bigint': return 'the BigInt ' + String(value).slice(0, 60) + 'n';
      case 'function': return 'a function';
      default: return 'an object';
    }
  };

  // --- The model: its source is the body of a factory run afresh for every call, so its
  // globals, closures and functions' properties start from the same state each time.
  // The names of the global object's own properties (the builtins, `hw` and the attribute
  // globals, added by __parasim_bind) are never taken for the model's functions.
  const builtinNames = new Set(Object.getOwnPropertyNames(globalThis));
  builtinNames.add('__parasim_call').add('__parasim_detail')
      .add('__parasim_model').add('__parasim_is_body').add('__parasim_bind');
  let modelFactory = null;
  let loadedModel = null;
  const RESET_REGEXP = /(?:)/;
  const freshModel = () => {
    randomState = RANDOM_SEED;
    RESET_REGEXP.exec('');  // RegExp.$1, RegExp.lastMatch... would carry the last call's match
    if (modelFactory === null) throw new ReferenceError('no model is loaded');
    return Reflect.apply(modelFactory, undefined, []);
  };
  const modelFunction = (model, name) => (hasOwn(model, name) && !builtinNames.has(name) &&
                                          typeof model[name] === 'function') ? model[name] : null;
  define('__parasim_is_body', function (source) {
    try { Function(source); return true; } catch { return false; }
  }, false);
  // Returns the names of the functions the model defines, as JSON.
  define('__parasim_model', function (factory) {
    if (modelFactory !== null) throw new TypeError('a model is already loaded');
    // arguments.callee (and its prototype object) would otherwise keep state
    freezeReachable([factory]);
    modelFactory = factory;
    loadedModel = freshModel();
    return JSON.stringify(Object.keys(loadedModel).filter(
        (name) => modelFunction(loadedModel, name) !== null));
  }, false);
  define('__parasim_call', function (name, args, params) {
    const fn = modelFunction(freshModel(), name);
    if (fn === null) throw new ReferenceError(name + ' is not defined');
    args.push(makeParams(params));
    const value = fn.apply(undefined, args);
    return typeof value === 'number' ? value : BAD_RESULT + describe(value);
  }, false);
  // A detail (e.g. computationDetail: what bounds a kernel) is a flat object of at most 16
  // numbers, booleans and short strings; it comes back as JSON.
  define('__parasim_detail', function (name, params) {
    const fn = modelFunction(freshModel(), name);
    if (fn === null) throw new ReferenceError(name + ' is not defined');
    const value = fn(makeParams(params));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return BAD_RESULT + describe(value);
    }
    const keys = Object.keys(value);
    if (keys.length > 16) return BAD_RESULT + 'an object of more than 16 entries';
    const flat = {};
    for (const key of keys) {
      const item = value[key];
      const kind = typeof item;
      if (kind === 'number' && !Number.isFinite(item)) return BAD_RESULT + 'a non-finite ' + key;
      if (kind === 'string' ? item.length > 60 : kind !== 'number' && kind !== 'boolean') {
        return BAD_RESULT + describe(item) + ' as ' + key;
      }
      flat[key] = item;
    }
    return JSON.stringify(flat);
  }, false);

  // --- Nothing shared can change: a new global is refused with a message naming it, and the
  // global object and every builtin reachable from it (prototypes, accessors, hw) are frozen.
  // The prototype it guards is frozen with the builtins below: a property defined on it
  // would be read as a global by every later call.
  const globalsPrototype = Object.getPrototypeOf(globalThis);
  const globalsGuard = new Proxy(globalsPrototype, {
    set(target, key) {
      throw new TypeError(STATE_ERROR + "it assigned global '" + String(key) + "'");
    },
    defineProperty(target, key) {
      throw new TypeError(STATE_ERROR + "it defined global '" + String(key) + "'");
    },
  });
  Object.setPrototypeOf(globalThis, globalsGuard);
  const seen = new Set([globalsGuard]);
  const pushReachable = (object, pending) => {
    pending.push(Object.getPrototypeOf(object));
    for (const key of Reflect.ownKeys(object)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined) continue;
      if ('value' in descriptor) pending.push(descriptor.value);
      else pending.push(descriptor.get, descriptor.set);
    }
  };
  const freezeReachable = (pending) => {
    while (pending.length > 0) {
      const object = pending.pop();
      if (object === null || (typeof object !== 'object' && typeof object !== 'function') ||
          seen.has(object)) continue;
      seen.add(object);
      Object.freeze(object);
      pushReachable(object, pending);
    }
  };
  // The Segments object and its iterator (%SegmentsPrototype%, %SegmentIteratorPrototype%) are
  // reachable only through a segmenter, and the first segmenter loads ICU's break rules (15-20
  // ms, issue 16: start-up): they are frozen as the model makes its first segmenter, which only
  // the Intl.Segmenter above can make, before the model can see them.
  const realSegment = Intl.Segmenter.prototype.segment;
  let segmentsFrozen = false;
  freezeSegments = (segmenter) => {
    if (segmentsFrozen) return;
    segmentsFrozen = true;
    const segments = Reflect.apply(realSegment, segmenter, ['']);
    freezeReachable([segments, segments[Symbol.iterator]()]);
  };
  // The global object stays open for the attributes (__parasim_bind freezes it); everything
  // it reaches now is frozen now.
  seen.add(globalThis);
  const pending = [globalsPrototype, paramsPrototype];
  pushReachable(globalThis, pending);
  // Intrinsics not reachable as properties of the global object.
  for (const make of [
    () => function* () {}, () => async function () {}, () => async function* () {},
    () => [][Symbol.iterator](), () => new Map()[Symbol.iterator](),
    () => new Set()[Symbol.iterator](), () => ''[Symbol.iterator](), () => ''.matchAll(/a/g),
    () => [].values().map((x) => x), () => Iterator.from({next() { return {done: true}; }}),
    () => (async function* () {})(), () => (function* () {})(),
    () => Object.getOwnPropertyDescriptor(Function.prototype, 'caller').get,
  ]) {
    try { pending.push(make()); } catch { /* not in this V8 */ }
  }
  freezeReachable(pending);

  // --- The hardware attributes, once; then the global object is frozen with the rest.
  let bound = false;
  define('__parasim_bind', function (attrs, globalNames) {
    if (bound) throw new TypeError('the attributes are bound');
    bound = true;
    const hw = Object.create(null);
    for (const key of Object.keys(attrs)) hw[key] = attrs[key];
    define('hw', hw, false);
    builtinNames.add('hw');
    for (const name of globalNames) {
      if (!(name in globalThis)) {
        define(name, attrs[name], true);
        builtinNames.add(name);
      }
    }
    Object.freeze(globalThis);
    const reached = [];
    pushReachable(globalThis, reached);
    freezeReachable(reached);
  }, false);
})();
