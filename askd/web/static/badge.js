// How many questions wait, where a background tab still shows it: in the
// tab's title and drawn on its favicon. The badge is painted on a canvas
// and set as a data: URL, which the page's CSP allows for images.

import { t } from './i18n.js';

const ICON = new URL('./favicon.svg', import.meta.url).href; // relative: works under a proxy's prefix
const SIZE = 64;

let base = null; // the plain icon, once loaded
let loading = false;
let count = 0;

function icon() {
  return document.querySelector('link[rel="icon"]');
}

function draw() {
  const link = icon();
  if (!link) return;
  if (!count || !base) {
    link.type = 'image/svg+xml';
    link.href = ICON;
    return;
  }
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = SIZE;
  const g = canvas.getContext('2d');
  if (!g) return;
  g.drawImage(base, 0, 0, SIZE, SIZE);
  const text = count > 9 ? '9+' : String(count);
  const r = SIZE * 0.3;
  const cx = SIZE - r;
  const cy = r;
  g.beginPath();
  g.arc(cx, cy, r, 0, 2 * Math.PI);
  g.fillStyle = '#dc2626';
  g.fill();
  g.lineWidth = SIZE * 0.05;
  g.strokeStyle = '#ffffff';
  g.stroke();
  g.fillStyle = '#ffffff';
  g.font = `bold ${Math.round(r * (text.length > 1 ? 1.05 : 1.4))}px system-ui, sans-serif`;
  g.textAlign = 'center';
  g.textBaseline = 'middle';
  g.fillText(text, cx, cy + 1);
  link.type = 'image/png';
  link.href = canvas.toDataURL('image/png');
}

/** Show `n` waiting questions in the title and on the favicon. */
export function showCount(n) {
  const title = t('page.title');
  document.title = n ? `(${n}) ${title}` : title;
  if (n === count) return;
  count = n;
  if (base === null && n && !loading) {
    loading = true;
    const img = new Image();
    img.onload = () => {
      base = img;
      draw(); // with the count of that moment
    };
    img.src = ICON;
  }
  draw();
}
