// Start reveal.js on a jaxtour deck. A slide taller than the screen first shrinks its
// biggest picture (down to MIN_PICTURE px), then, if still too tall, scrolls instead of
// being cut off; <html data-deck-ready="true"> tells a browser test the deck is up.
var MIN_PICTURE = 240;

function jaxtourDeck(options) {
  function shrinkBiggestPicture(slide, overflow) {
    var pictures = slide.querySelectorAll(".jp-RenderedSVG svg, .jp-RenderedImage img");
    var biggest = null, height = 0;
    pictures.forEach(function (picture) {
      var h = picture.getBoundingClientRect().height / Reveal.getScale();
      if (h > height) { biggest = picture; height = h; }
    });
    if (biggest && height > MIN_PICTURE) {
      biggest.style.maxHeight = Math.max(MIN_PICTURE, height - overflow) + "px";
    }
  }
  function fit() {
    var slide = Reveal.getCurrentSlide();
    if (!slide || slide.scrollHeight <= options.height) return;
    shrinkBiggestPicture(slide, slide.scrollHeight - options.height);
    if (slide.scrollHeight > options.height) slide.classList.add("jt-scroll");
  }
  Reveal.on("slidechanged", fit);
  return Reveal.initialize({
    width: options.width,
    height: options.height,
    margin: 0.04,
    center: false,
    hash: true,
    controls: true,
    progress: true,
    transition: options.transition,
    slideNumber: options.slideNumber,
    plugins: [RevealNotes]
  }).then(function () {
    fit();
    document.documentElement.dataset.deckReady = "true";
  });
}
