// The publisher's own code on every article page: track the view, then show the smart section.
(function () {
  var me = document.currentScript;
  var trackingKey = me.getAttribute('data-tracking-key');
  var blockKey = me.getAttribute('data-block-key');

  // The display function: global, one parameter, reads result.recommendation (spec 4.12).
  window.showRecommendations = function (response) {
    var list = document.getElementById('recos');
    list.textContent = '';
    (response.result ? response.result.recommendation : []).forEach(function (item) {
      var li = document.createElement('li');
      var a = document.createElement('a');
      a.href = item.url;
      a.textContent = item.title;
      a.setAttribute('data-guid', item.guid);
      var small = document.createElement('small');
      small.textContent = item.category_display + (item.published_time ? ' · ' + new Date(item.published_time * 1000).toLocaleDateString() : '');
      li.appendChild(a);
      li.appendChild(document.createElement('br'));
      li.appendChild(small);
      // Why it is recommended ("Because you read …"), as the library words it: plain text, read out with the item.
      var why = Recos.reasonText(item);
      if (why) {
        var reason = document.createElement('p');
        reason.className = 'reason';
        reason.textContent = why;
        li.appendChild(reason);
      }
      list.appendChild(li);
    });
    document.getElementById('recos-algo').textContent = 'algo: ' + response.algo;
    list.setAttribute('data-state', 'done');
  };

  Recos.trackPage(trackingKey).then(function () {
    Recos.getRecommendations(blockKey, null, 'showRecommendations', 4, []);
  });
})();
