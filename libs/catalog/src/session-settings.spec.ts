// The startup options every connection sends: each pinned setting once, escaped for the server's splitter,
// and appended after a URL's own options so that ours are the ones the server keeps.

import { PINNED_SETTINGS, startupOptions, urlWithStartupOptions } from './session-settings.js';

describe('startup options', () => {
  it('name every pinned setting, spaces escaped for the server', () => {
    const options = startupOptions();
    expect(options).toContain('-c standard_conforming_strings=on');
    expect(options).toContain('-c search_path=pg_catalog,pg_temp');
    expect(options).toContain('-c role=none');
    expect(options).toContain('-c default_transaction_isolation=read\\ committed');
    expect(options.split(' ')).toContain('local_preload_libraries=');
    expect(options.match(/-c /g)).toHaveLength(PINNED_SETTINGS.length);
  });

  it('are added to a URL without options, credentials and other parameters kept', () => {
    const url = 'postgres://user:p%40ss%2Fw@db.example:6543/app?sslmode=require&application_name=x';
    const parsed = new URL(urlWithStartupOptions(url));
    expect(parsed.username).toBe('user');
    expect(parsed.password).toBe('p%40ss%2Fw');
    expect(parsed.host).toBe('db.example:6543');
    expect(parsed.pathname).toBe('/app');
    expect(parsed.searchParams.get('sslmode')).toBe('require');
    expect(parsed.searchParams.get('options')).toBe(startupOptions());
  });

  it("come after a URL's own options, so a URL cannot unpin a setting", () => {
    const url =
      'postgres://user@db/app?options=-c%20search_path%3Dpublic%20-c%20standard_conforming_strings%3Doff';
    const options = new URL(urlWithStartupOptions(url)).searchParams.get('options');
    expect(options).toBe(`-c search_path=public -c standard_conforming_strings=off ${startupOptions()}`);
  });
});
