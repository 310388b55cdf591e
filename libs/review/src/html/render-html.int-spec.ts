// The HTML report of a 200-role policy opened in real headless Chromium (Debian's chromium, driven by
// playwright-core) with every network request refused: it renders, its script runs without errors, the role
// graph is visible, and a screenshot is written to bench/results/review-report.png for people to look at.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { chromium, type Browser } from 'playwright-core';

import { buildReviewArtifact, renderReviewHtml } from '../index.js';
import { largeReviewInput } from '../test-support/large.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const RESULTS = join(process.cwd(), 'bench', 'results');

let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does) or set CHROMIUM_PATH`,
    );
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
});

describe('HTML review report in headless Chromium', () => {
  it('renders a 200-role review offline with the role graph visible, and writes a screenshot', async () => {
    const artifact = buildReviewArtifact(largeReviewInput());
    expect(artifact.recorded.visual.meta.role_count).toBe(200);
    const html = renderReviewHtml(artifact);
    expect(renderReviewHtml(artifact)).toBe(html);

    const context = await browser.newContext({ viewport: { width: 1600, height: 1100 }, offline: true });
    const requests: string[] = [];
    await context.route('**/*', async (route) => {
      requests.push(route.request().url());
      await route.abort();
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.setContent(html, { waitUntil: 'load' });

    expect(await page.title()).toBe('Review: platform (production)');
    const graph = page.locator('#graph svg');
    await graph.scrollIntoViewIfNeeded();
    expect(await graph.isVisible()).toBe(true);
    const box = await graph.boundingBox();
    expect(box!.width).toBeGreaterThan(800);
    expect(box!.height).toBeGreaterThan(400);
    expect(await page.locator('#graph g.node').count()).toBeGreaterThan(200);
    // The script fitted the drawing: the viewport carries a transform and some node lies inside the frame.
    expect(await page.locator('#viewport').getAttribute('transform')).toMatch(/^translate\(/);
    // Evaluated in the page (a string: this project compiles without DOM types).
    const inside = await page.evaluate<number>(`(() => {
      const frame = document.getElementById('graph').getBoundingClientRect();
      return [...document.querySelectorAll('#graph g.node')].filter((n) => {
        const r = n.getBoundingClientRect();
        return r.width > 4 && r.left >= frame.left && r.right <= frame.right && r.top >= frame.top && r.bottom <= frame.bottom;
      }).length;
    })()`);
    expect(inside).toBeGreaterThan(50);
    // Search highlights matching roles and dims the rest.
    await page.fill('#q', 'svc07_app');
    expect(await page.locator('#graph g.node.hit').count()).toBe(1);
    expect(await page.locator('#graph g.node.dim').count()).toBeGreaterThan(100);
    await page.fill('#q', '');

    expect(await page.locator('.finding').count()).toBe(artifact.recorded.findings.length);
    expect(await page.locator('details.phase').count()).toBe(artifact.recorded.phases.length);
    mkdirSync(RESULTS, { recursive: true });
    await page.locator('#fit').click();
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(RESULTS, 'review-report.png'), fullPage: false });
    await page.locator('#graph').screenshot({ path: join(RESULTS, 'review-graph.png') });

    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await context.close();
  });
});
