// Start reveal.js on a jaxtour deck and fit every slide to the screen, once, when the deck
// is up (in the presenter's view and in the print view that makes the PDF handouts):
//  1. the pictures of a slide (diagrams, plots) take the height the rest of the slide leaves,
//     growing up to MAX_GROWTH times their own size, shrinking down to MIN_PICTURE px, and
//     never below the height the deck builder found legible (data-jt-min-height: the
//     builder gave such a picture the room, on a slide of its own if need be);
//  2. a slide still taller than the screen is zoomed out to fit, down to MIN_ZOOM, and no
//     further than keeps its pictures legible (its natural height stays in
//     data-jt-natural, which the slide lint reports);
//  3. only a slide that does not fit even then scrolls (class jt-scroll).
// <html data-deck-ready="true"> tells a browser test (and the PDF printer) the deck is up:
// in the print view (?print-pdf) only once reveal.js has laid out its pages.
// Navigation is linear: → (and a clicker's PageDown) walks every slide in order, into and
// out of vertical stacks. A handout (?print-pdf) puts each slide's notes under it: the
// page is NOTES_ROOM px taller than the slide, and the notes sit in that strip.
var MIN_PICTURE = 200, MAX_GROWTH = 2, MIN_ZOOM = 0.7, SLACK = 4, NOTES_ROOM = 260;
var PICTURES = ".jp-RenderedSVG > svg, .jp-RenderedImage > img";

function jaxtourDeck(options) {
  var H = options.height;
  var printing = /print-pdf/i.test(window.location.search);

  function pictures(slide) {
    return Array.prototype.filter.call(slide.querySelectorAll(PICTURES), function (p) {
      return !p.closest("aside.notes");
    });
  }
  function measured(element) {
    var box = element.getBoundingClientRect(), scale = Reveal.getScale() || 1;
    return {width: box.width / scale, height: box.height / scale};
  }
  function fitPictures(slide) {
    var found = pictures(slide);
    if (!found.length) return;
    found.forEach(function (p) { p.style.height = ""; p.style.maxHeight = "none"; });
    var sizes = found.map(measured), total = 0;
    sizes.forEach(function (s) { total += s.height; });
    if (total < 1) return;
    var rest = slide.scrollHeight - total;
    var factor = Math.min(MAX_GROWTH, (H - rest - SLACK) / total);
    found.forEach(function (p, i) {
      var room = p.parentElement.clientWidth || options.width;
      var f = Math.min(factor, room / Math.max(sizes[i].width, 1));
      var height = Math.max(Math.min(MIN_PICTURE, sizes[i].height), sizes[i].height * f);
      height = Math.max(height, legible(p));
      p.style.height = height + "px";
      p.style.width = "auto";
      p.style.maxWidth = "100%";
    });
  }
  function legible(p) { return +(p.getAttribute("data-jt-min-height") || 0); }
  function zoomFloor(slide) {  // the smallest zoom at which every picture stays legible
    var floor = MIN_ZOOM;
    pictures(slide).forEach(function (p) {
      var h = measured(p).height;
      if (legible(p) && h > 0) floor = Math.max(floor, legible(p) / h);
    });
    return Math.min(floor, 1);
  }
  function fit(slide) {
    slide.classList.remove("jt-scroll");
    slide.style.zoom = "";
    delete slide.dataset.jtNatural;
    fitPictures(slide);
    var natural = slide.scrollHeight;
    if (natural <= H) return;
    slide.dataset.jtNatural = natural;
    var zoom = Math.max(zoomFloor(slide), H / natural);
    slide.style.zoom = zoom;
    if (slide.scrollHeight * zoom > H + 1) slide.classList.add("jt-scroll");
  }
  function fitAll() {
    // A slide away from the current one is display:none; show it (unseen) to measure it.
    Reveal.getSlides().forEach(function (slide) {
      var hidden = getComputedStyle(slide).display === "none";
      var stack = slide.parentElement.tagName === "SECTION" ? slide.parentElement : null;
      var stackHidden = stack && getComputedStyle(stack).display === "none";
      if (stackHidden) { stack.style.display = "block"; }
      if (hidden) { slide.style.display = "block"; slide.style.visibility = "hidden"; }
      fit(slide);
      if (hidden) { slide.style.display = ""; slide.style.visibility = ""; }
      if (stackHidden) { stack.style.display = ""; }
    });
  }
  var paged = new Promise(function (resolve) {
    if (printing) { Reveal.on("pdf-ready", resolve); } else { resolve(); }
  });
  return Reveal.initialize({
    width: options.width,
    height: printing ? H + NOTES_ROOM : H,
    navigationMode: "linear",
    showNotes: printing,
    margin: 0.04,
    center: false,
    hash: true,
    controls: true,
    progress: true,
    transition: options.transition,
    slideNumber: options.slideNumber,
    pdfMaxPagesPerSlide: 1,
    pdfSeparateFragments: false,
    plugins: [RevealNotes]
  }).then(function () {
    fitAll();
    Reveal.layout();
    return paged;
  }).then(function () {
    if (printing) fitAll();
    document.documentElement.dataset.deckReady = "true";
  });
}
