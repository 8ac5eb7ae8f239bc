/* asrbench report: sortable and filterable tables, charts, the utterance browser, and the
 * page switcher of single-file sites. No network: everything it needs is in the page. */
(function () {
  'use strict';

  function pageData(root) {
    var el = root.querySelector('script.page-data');
    return el ? JSON.parse(el.textContent) : {};
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  /* ---- tables: click a header to sort; empty values always sort last ---- */
  function cellValue(row, index) {
    var c = row.children[index];
    if (!c) return '';
    return c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent.trim();
  }

  function sortTable(table, th) {
    var headRow = th.parentNode;
    var index = Array.prototype.indexOf.call(headRow.children, th);
    // headers spanning columns (two-row heads) map to their first column
    var col = 0;
    for (var i = 0; i < index; i++) col += headRow.children[i].colSpan || 1;
    if (headRow.parentNode.rows.length > 1 && headRow !== headRow.parentNode.rows[0]) {
      col += table.tHead.rows[0].children[0].colSpan || 1;  // the row-header column
    }
    var numeric = th.getAttribute('data-sort') === 'num';
    var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
    table.querySelectorAll('thead th[aria-sort]').forEach(function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, k) { r._k = k; });
    rows.sort(function (a, b) {
      var x = cellValue(a, col), y = cellValue(b, col);
      if (x === '' && y === '') return a._k - b._k;
      if (x === '') return 1;
      if (y === '') return -1;
      var c;
      if (numeric) c = parseFloat(x) - parseFloat(y);
      else c = x.localeCompare(y);
      if (c === 0 || isNaN(c)) return a._k - b._k;
      return dir === 'ascending' ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function initTables(root) {
    root.querySelectorAll('table.sortable').forEach(function (table) {
      table.querySelectorAll('thead th[data-sort]').forEach(function (th) {
        th.tabIndex = 0;
        th.addEventListener('click', function () { sortTable(table, th); });
        th.addEventListener('keydown', function (e) {
          if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortTable(table, th); }
        });
      });
    });
    root.querySelectorAll('input.table-filter').forEach(function (input) {
      var table = root.querySelector('#' + CSS.escape(input.getAttribute('data-table')));
      if (!table) return;
      input.addEventListener('input', function () {
        var q = input.value.trim().toLowerCase();
        Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
          r.hidden = q !== '' && r.textContent.toLowerCase().indexOf(q) < 0;
        });
      });
    });
  }

  /* ---- charts ---- */
  function initCharts(root, data) {
    var figs = data.charts || {};
    root.querySelectorAll('div.chart[data-chart]').forEach(function (div) {
      var fig = figs[div.getAttribute('data-chart')];
      if (!fig || !window.Plotly) return;
      window.Plotly.newPlot(div, fig.data, fig.layout, {
        displaylogo: false, responsive: true,
        modeBarButtonsToRemove: ['select2d', 'lasso2d']
      });
    });
  }

  /* ---- utterance browser ---- */
  function pct(x) { return x === null || x === undefined ? '-' : (100 * x).toFixed(1) + ' %'; }

  function audioSrc(u, data) {
    if (!u.a) return null;
    if (data.embed) {
      var store = document.getElementById('audio-store');
      if (!store) return null;
      if (!store._parsed) store._parsed = JSON.parse(store.textContent);
      return store._parsed[u.a] || null;
    }
    return (data.audioRoot || '') + u.a;
  }

  function alignment(u) {
    var box = el('div', 'align');
    box.setAttribute('aria-label', 'alignment: reference above, hypothesis below');
    u.ops.forEach(function (op) {
      var kind = op[0];
      var col = el('span', 'col op-' + kind);
      col.title = {C: 'correct', S: 'substitution', D: 'deletion', I: 'insertion'}[kind];
      col.appendChild(el('span', 'r', op[1] === null ? '***' : op[1]));
      col.appendChild(el('span', 'h', op[2] === null ? '***' : op[2]));
      if (kind !== 'C') col.appendChild(el('span', 'e', kind));
      box.appendChild(col);
    });
    if (!u.ops.length) box.appendChild(el('span', 'note', '(empty reference and hypothesis)'));
    return box;
  }

  function texts(u, data) {
    var d = el('details', 'texts');
    d.appendChild(el('summary', null, 'Texts, normalisation steps and DAE'));
    var dl = el('dl', 'kv');
    function add(k, v) { dl.appendChild(el('dt', null, k)); dl.appendChild(el('dd', null, v)); }
    add('reference (raw)', u.ref === null ? '(none)' : u.ref);
    add('hypothesis (raw)', u.hyp === null ? '(no hypothesis)' : u.hyp);
    add('reference (normalised)', u.rn);
    add('hypothesis (normalised)', u.hn);
    add('steps that changed it', data.stepsKnown ? (u.steps.length ? u.steps.join(', ') : 'none') :
        'not computed for this dataset (see the scorer ablation)');
    add('DAE alternatives', u.alt.length ? u.alt.map(function (a) {
      return '"' + a[0] + '" read as "' + a[1] + '"';
    }).join('; ') : 'none applied');
    d.appendChild(dl);
    return d;
  }

  function renderUtt(u, data) {
    var box = el('div', 'utt');
    box.setAttribute('data-id', u.id);
    var head = el('div', 'utt-head');
    head.appendChild(el('span', 'uid', u.id));
    if (u.ops === null) head.appendChild(el('span', 'stats', 'no reference: hypothesis only'));
    else head.appendChild(el('span', 'stats', 'TER ' + pct(u.t) + ' · ' + u.e + ' error(s): ' +
      u.s + ' S, ' + u.d + ' D, ' + u.i + ' I of ' + u.n + ' word(s)'));
    if (u.dur !== null && u.dur !== undefined) head.appendChild(el('span', 'dur', u.dur.toFixed(2) + ' s'));
    if (u.fail) head.appendChild(el('span', 'failed', 'failed: ' + u.fail));
    else if (u.miss) head.appendChild(el('span', 'failed', 'empty hypothesis'));
    box.appendChild(head);
    var src = audioSrc(u, data);
    if (src) {
      var a = document.createElement('audio');
      a.controls = true;
      a.preload = 'metadata';
      a.src = src;
      box.appendChild(a);
    } else {
      box.appendChild(el('div', 'note', 'no audio'));
    }
    if (u.ops === null) {
      box.appendChild(el('div', 'hyp-only', u.hyp === null ? '(no hypothesis)' : u.hyp));
      return box;
    }
    box.appendChild(alignment(u));
    box.appendChild(texts(u, data));
    return box;
  }

  function initUtterances(root, data) {
    var list = root.querySelector('.utt-list');
    if (!list || !data.utts) return;
    var search = root.querySelector('.utt-search');
    var filter = root.querySelector('.utt-filter');
    var order = root.querySelector('.utt-order');
    var count = root.querySelector('.utt-count');
    var info = root.querySelector('.pageinfo');
    var prev = root.querySelector('.pager .prev');
    var next = root.querySelector('.pager .next');
    var size = data.pageSize || 25;
    var all = data.utts;
    all.forEach(function (u, k) {
      u._k = k;
      u._text = (u.id + '\n' + (u.ref || '') + '\n' + (u.hyp || '') + '\n' + u.rn + '\n' + u.hn).toLowerCase();
    });
    var shown = all, page = 0;
    function update() {
      var q = search.value.trim().toLowerCase();
      var f = filter.value;
      shown = all.filter(function (u) {
        if (q && u._text.indexOf(q) < 0) return false;
        if (f === 'err') return u.e > 0;
        if (f === 'ok') return u.e === 0;
        if (f === 'failed') return !!u.fail || u.miss;
        return true;
      });
      if (order.value === 'best') shown = shown.slice().reverse();
      else if (order.value === 'id') shown = shown.slice().sort(function (a, b) { return a.id < b.id ? -1 : a.id > b.id ? 1 : 0; });
      page = 0;
      draw();
    }
    function draw() {
      var pages = Math.max(1, Math.ceil(shown.length / size));
      page = Math.min(page, pages - 1);
      var frag = document.createDocumentFragment();
      shown.slice(page * size, (page + 1) * size).forEach(function (u) { frag.appendChild(renderUtt(u, data)); });
      list.replaceChildren(frag);
      count.textContent = shown.length + ' of ' + all.length + ' utterances';
      info.textContent = 'page ' + (page + 1) + ' of ' + pages;
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }
    search.addEventListener('input', update);
    filter.addEventListener('change', update);
    order.addEventListener('change', update);
    prev.addEventListener('click', function () { page--; draw(); });
    next.addEventListener('click', function () { page++; draw(); });
    update();
  }

  /* ---- players placed by a page (e.g. clean vs attacked): <audio data-a="audio/..."> ---- */
  function initPlayers(root, data) {
    root.querySelectorAll('audio[data-a]').forEach(function (a) {
      var src = audioSrc({a: a.getAttribute('data-a')}, data);
      var t = a.getAttribute('data-t');  // a media fragment: start (and end) in seconds
      if (src) a.src = t ? src + '#t=' + t : src;
    });
  }

  function init(root) {
    if (root.getAttribute('data-ready')) return;
    root.setAttribute('data-ready', '1');
    var data = pageData(root);
    initTables(root);
    initUtterances(root, data);
    initCharts(root, data);
    initPlayers(root, data);
  }

  /* ---- single-file sites: the URL fragment "#/<page>[#anchor]" picks the section ---- */
  function route() {
    var sections = document.querySelectorAll('section.page');
    var h = decodeURIComponent(location.hash || '');
    var target = 'index.html', anchor = null;
    if (h.indexOf('#/') === 0) {
      var rest = h.slice(2), cut = rest.indexOf('#');
      target = cut < 0 ? rest : rest.slice(0, cut);
      anchor = cut < 0 ? null : rest.slice(cut + 1);
    }
    var found = null;
    sections.forEach(function (s) { if (s.getAttribute('data-page') === target) found = s; });
    if (!found) found = sections[0];
    sections.forEach(function (s) { s.hidden = s !== found; });
    init(found);
    if (anchor) {
      var a = found.querySelector('#' + CSS.escape(anchor));
      if (a) a.scrollIntoView();
    } else {
      window.scrollTo(0, 0);
    }
  }

  window.ASRB = {init: init, route: route};
  if (document.body.classList.contains('single')) {
    window.addEventListener('hashchange', route);
    route();
  } else {
    document.querySelectorAll('section.page').forEach(init);
  }
})();
