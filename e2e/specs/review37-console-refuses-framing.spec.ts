import { expect, test } from '../fixtures/test.ts';

/**
 * Review 37. The console's pages carry Apply, Approve and Terminate buttons. SameSite=Strict keeps the
 * session cookie out of a frame on another site, but not out of a frame on the same site: another
 * port of the same host, or a sibling subdomain (wiki.corp.example framing console.corp.example), is
 * same-site, so its page can frame the signed-in console and lure clicks onto those buttons
 * (clickjacking). The standard (OWASP ASVS 4.0 V14.4.7, OWASP Clickjacking Defense): every page says
 * who may frame it, with `X-Frame-Options` or CSP `frame-ancestors`.
 */
test('review 37: the signed-in console says no other page may frame it', async ({ request, baseURL }) => {
  for (const path of ['/runs', '/approvals', '/sign-in']) {
    const res = await request.get(`${baseURL ?? ''}${path}`, { maxRedirects: 0 });
    expect(res.status(), path).toBe(200);
    const headers = res.headers();
    const xfo = (headers['x-frame-options'] ?? '').toUpperCase();
    const csp = headers['content-security-policy'] ?? '';
    const framedBy = /frame-ancestors\s+('none'|'self')/.test(csp) || xfo === 'DENY' || xfo === 'SAMEORIGIN';
    expect(framedBy, `${path}: X-Frame-Options "${xfo}", CSP "${csp}"`).toBe(true);
  }
});
